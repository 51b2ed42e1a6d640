// The served OpenAPI document as linters read it: Stoplight Spectral's CLI with the repository's .spectral.yaml
// (spectral:oas and the OWASP API Security ruleset, both from node_modules, offline). spectral:oas reports nothing;
// of the OWASP rules only those of STAYING report, each only where its reason holds (docs/architecture.md, "The REST facade").
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestServer } from "../../helpers/api";

const root = path.resolve(import.meta.dirname, "../../..");
const cli = path.join(root, "node_modules/@stoplight/spectral-cli/dist/index.js");

/** The OWASP rules that stay reported on the served document, with the reason docs/architecture.md, "The REST facade" gives for each. */
const STAYING = {
  "owasp:api8:2023-define-cors-origin":
    "No CORS: API keys are server-side secrets, so the API sends no Access-Control-Allow-Origin on any answer.",
  "owasp:api4:2023-rate-limit":
    "The rule's oneOf accepts exactly one family of rate-limit headers; every 2xx and 4xx answer declares the two it sends, X-RateLimit-* (docs/api-contract.md §8) and the IETF RateLimit and RateLimit-Policy.",
  "owasp:api8:2023-no-server-http":
    "servers[0] is the origin the document was downloaded from: http on this test server, https behind TLS.",
  "owasp:api4:2023-string-restricted":
    "A warning: free text (names, notes, descriptions) has no format or pattern to declare; every string has its maxLength.",
  "owasp:api8:2023-define-error-responses-401": "A warning: GET /status needs no key, so it never answers 401.",
  "owasp:api2:2023-read-restricted": "A warning: GET /status is public by design (docs/api-contract.md §4.8).",
} as const;

interface Finding {
  code: string;
  path: Array<string | number>;
  message: string;
  severity: number;
}

let server: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: the document is walked generically.
let document: any;
let findings: Finding[];

/** What `spectral lint` reports on `file` with the repository's ruleset (exit code 1 just means errors were found). */
function lint(file: string): Promise<Finding[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, "lint", "--ruleset", path.join(root, ".spectral.yaml"), "--format", "json", "--quiet", file],
      { cwd: root, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, SCARF_ANALYTICS: "false" } },
      (error, stdout, stderr) => {
        if (error && error.code !== 1) reject(new Error(`spectral failed (${error.code}): ${stderr}`));
        else resolve(JSON.parse(stdout) as Finding[]);
      },
    );
  });
}

/** The node a finding's path names. */
function at(where: ReadonlyArray<string | number>): unknown {
  // biome-ignore lint/suspicious/noExplicitAny: walking JSON.
  return where.reduce<any>((node, key) => node?.[key], document);
}

beforeAll(async () => {
  server = await startApi();
  const text = await fetch(`${server.url}/openapi.json`).then((res) => res.text());
  document = JSON.parse(text);
  const dir = mkdtempSync(path.join(tmpdir(), "crm-spectral-"));
  const file = path.join(dir, "openapi.json");
  writeFileSync(file, text);
  try {
    findings = await lint(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const counts = new Map<string, number>();
  for (const finding of findings) counts.set(finding.code, (counts.get(finding.code) ?? 0) + 1);
  console.log(
    `spectral on /api/v1/openapi.json: ${findings.length} findings\n${[...counts].map(([code, n]) => `  ${code}: ${n}`).join("\n")}`,
  );
}, 120_000);
afterAll(() => server.close());

describe("Spectral on the served document (.spectral.yaml)", () => {
  it("spectral:oas reports nothing (and both rulesets ran)", () => {
    expect(findings.some((finding) => finding.code === "owasp:api8:2023-define-cors-origin")).toBe(true);
    expect(findings.filter((finding) => !finding.code.startsWith("owasp:"))).toEqual([]);
  });

  it("of the OWASP rules, only the documented ones report: strings, integers, arrays, tags, 429s and servers are clean", () => {
    const claimed = findings.filter((finding) => finding.code.startsWith("owasp:") && !(finding.code in STAYING));
    expect(claimed.map((f) => `${f.code} ${f.path.join(".")}: ${f.message}`)).toEqual([]);
  });

  it("each rule that stays reports only where its reason holds", () => {
    const where = (code: keyof typeof STAYING) => findings.filter((finding) => finding.code === code);
    for (const finding of where("owasp:api8:2023-define-cors-origin"))
      expect(finding.message).toContain("Access-Control-Allow-Origin");
    for (const finding of where("owasp:api4:2023-rate-limit")) {
      const headers = at(finding.path) as Record<string, unknown>;
      expect(Object.keys(headers), finding.path.join(".")).toEqual(
        expect.arrayContaining(["X-RateLimit-Limit", "RateLimit", "RateLimit-Policy"]),
      );
    }
    expect(where("owasp:api8:2023-no-server-http").map((f) => f.path.join("."))).toEqual(["servers.0.url"]);
    expect(document.servers[0].url).toMatch(/^http:\/\//);
    for (const finding of where("owasp:api4:2023-string-restricted")) {
      expect(finding.severity, finding.path.join(".")).toBe(1);
      expect((at(finding.path) as { maxLength?: number }).maxLength, finding.path.join(".")).toBeGreaterThan(0);
    }
    for (const code of ["owasp:api8:2023-define-error-responses-401", "owasp:api2:2023-read-restricted"] as const) {
      for (const finding of where(code)) {
        expect(finding.severity).toBe(1);
        expect(finding.path.slice(0, 2)).toEqual(["paths", "/status"]);
      }
    }
  });

  it("every 2xx and 4xx answer declares both rate-limit header families, every 429 its Retry-After", () => {
    const missing: string[] = [];
    for (const [route, item] of Object.entries(document.paths as Record<string, Record<string, { responses: object }>>))
      for (const [method, operation] of Object.entries(item))
        for (const [status, response] of Object.entries(operation.responses as Record<string, { headers?: object }>)) {
          if (!/^[24]/.test(status)) continue;
          const names = Object.keys(response.headers ?? {});
          const wanted = [
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
            "RateLimit",
            "RateLimit-Policy",
          ];
          if (status === "429") wanted.push("Retry-After");
          for (const name of wanted) if (!names.includes(name)) missing.push(`${method} ${route} ${status} ${name}`);
        }
    expect(missing).toEqual([]);
  });
});
