// compose.yaml checked offline: Debian's docker-compose resolves it with .env.example (`config`) and refuses it
// without a secret or PUBLIC_URL; dclint checks it against the Compose schema and its rules (.dclintrc); and the
// resolved file has what the deployment relies on: the app after its one-shot migrations, pinned images, Redis without
// eviction, Inngest on a database of its own with its dashboard on loopback only, every variable listed in
// .env.example, and every variable the README documents passed to the app. `.ci/run` installs docker-compose
// (apt-get) when it is missing.
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ENV_EXAMPLE_MARKER, ENV_EXAMPLE_PLACEHOLDER, EnvSchema } from "../../server/env";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const composeFile = path.join(root, "compose.yaml");
const envExample = path.join(root, ".env.example");

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  ports?: Array<string | { published: string | number; target: number; host_ip?: string }>;
  volumes?: unknown[];
  healthcheck?: { test: string[] };
}

let services: Record<string, Service> = {};

/** docker-compose with the project's file; its stdout, stderr and exit status. */
function compose(envFile: string, ...args: string[]) {
  return spawnSync("docker-compose", ["-f", composeFile, "--env-file", envFile, ...args], {
    cwd: root,
    encoding: "utf8",
  });
}

beforeAll(() => {
  const found = spawnSync("docker-compose", ["version"], { encoding: "utf8" });
  expect(
    found.status,
    "docker-compose is missing: install Debian's package (as root: apt-get install docker-compose); .ci/run does",
  ).toBe(0);
  const resolved = compose(envExample, "config");
  expect(resolved.status, resolved.stderr).toBe(0);
  services = (parseYaml(resolved.stdout) as { services: Record<string, Service> }).services;
});

describe("compose.yaml", () => {
  it("is valid for docker-compose with .env.example (config -q)", () => {
    const checked = compose(envExample, "config", "-q");
    expect(checked.stderr).toBe("");
    expect(checked.status).toBe(0);
  });

  it("refuses to resolve while a secret or PUBLIC_URL is unset, naming it", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "crm-compose-"));
    try {
      for (const name of ["POSTGRES_PASSWORD", "PUBLIC_URL"]) {
        const envFile = path.join(dir, ".env");
        writeFileSync(envFile, readFileSync(envExample, "utf8").replace(new RegExp(`^${name}=.*$`, "m"), ""));
        const checked = compose(envFile, "config", "-q");
        expect(checked.status, name).not.toBe(0);
        expect(checked.stderr).toContain(`set ${name} in .env`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("passes dclint (schema and rules) without a warning", async () => {
    const dclint = path.join(root, "node_modules", ".bin", "dclint");
    const { stdout } = await run(dclint, [composeFile, "--max-warnings", "0"], { cwd: root });
    expect(stdout).not.toMatch(/error|warning/i);
  });

  it("starts the app after its one-shot migrations, with the database and Redis healthy", () => {
    expect(services.app?.depends_on).toEqual({
      migrate: { condition: "service_completed_successfully" },
      postgres: { condition: "service_healthy" },
      redis: { condition: "service_healthy" },
    });
    expect(services.migrate?.command).toEqual(["node", "dist/migrate.js"]);
    expect(services.migrate?.build).toEqual(services.app?.build);
    expect(services.app?.environment?.DATABASE_URL).toMatch(/^postgresql:\/\/crm:[^@]+@postgres:5432\/crm$/);
  });

  it("pins every image; PostgreSQL 17 has a volume and a health check; Redis never evicts", () => {
    expect(services.postgres?.image).toMatch(/^postgres:17\.\d+$/);
    expect(services.postgres?.volumes?.length).toBeGreaterThan(0);
    expect(services.postgres?.healthcheck?.test.join(" ")).toContain("pg_isready");
    expect(services.redis?.image).toMatch(/^redis:7\.\d+\.\d+$/);
    expect(services.redis?.command?.join(" ")).toContain("--maxmemory-policy noeviction");
    expect(services.inngest?.image).toMatch(/^inngest\/inngest:v\d+\.\d+\.\d+$/);
  });

  it("runs `inngest start` on a database of its own with the keys from .env, registers the app, dashboard on loopback", () => {
    const inngest = services.inngest as Service;
    expect(inngest.command?.slice(0, 2)).toEqual(["inngest", "start"]);
    expect(inngest.command?.join(" ")).toContain("--sdk-url http://app:3000/api/inngest");
    expect(inngest.environment?.INNGEST_POSTGRES_URI).toMatch(/@postgres:5432\/inngest$/);
    const example = readFileSync(envExample, "utf8");
    const value = (name: string) => new RegExp(`^${name}=(.*)$`, "m").exec(example)?.[1];
    for (const name of ["INNGEST_EVENT_KEY", "INNGEST_SIGNING_KEY"]) {
      expect(inngest.environment?.[name]).toBe(value(name));
      expect(services.app?.environment?.[name]).toBe(value(name));
    }
    const published = (inngest.ports ?? []).map((port) =>
      typeof port === "string" ? port : `${port.host_ip ?? ""}:${port.published}:${port.target}`,
    );
    expect(published.length).toBeGreaterThan(0);
    for (const port of published) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  it("lists every variable compose.yaml reads in .env.example, each secret with how to make it", () => {
    const used = new Set([...readFileSync(composeFile, "utf8").matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]));
    const example = readFileSync(envExample, "utf8");
    for (const name of used) expect(example, name).toMatch(new RegExp(`^${name}=`, "m"));
    const secrets = example.split("\n").filter((line) => line.startsWith("# secret:"));
    expect(secrets).toHaveLength(5);
    expect(example).toContain("openssl rand -hex 32");
  });

  it("gives every secret and PUBLIC_URL a placeholder the app refuses in production (server/env.ts)", () => {
    const example = readFileSync(envExample, "utf8").split("\n");
    const secrets = example.flatMap((line, index) =>
      line.startsWith("# secret:") ? [example.slice(index).find((next) => /^[A-Z_]+=/.test(next)) ?? ""] : [],
    );
    expect(secrets).toHaveLength(5);
    for (const line of secrets) expect(line.split("=")[1], line).toBe(ENV_EXAMPLE_PLACEHOLDER);
    expect(example.find((line) => line.startsWith("PUBLIC_URL="))).toContain(ENV_EXAMPLE_MARKER);
    expect(ENV_EXAMPLE_PLACEHOLDER.startsWith(ENV_EXAMPLE_MARKER)).toBe(true);
  });

  it("passes the app every variable the README documents, and the README documents every one server/env.ts reads", () => {
    const readme = readFileSync(path.join(root, "README.md"), "utf8");
    const section = readme.slice(
      readme.indexOf("## Configuration"),
      readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1),
    );
    const documented = new Set(
      section
        .split("\n")
        .filter((line) => line.startsWith("| `"))
        .flatMap((line) =>
          [...(line.split("|")[1] ?? "").matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1] as string),
        ),
    );
    // NODE_ENV is the image's (production) and npm start's; it is no setting of the deployment.
    const read = Object.keys(EnvSchema.shape).filter((name) => name !== "NODE_ENV");
    expect(read.filter((name) => !documented.has(name))).toEqual([]);
    // Documented variables compose does not pass, and why.
    const notForCompose: Record<string, string> = {
      KV_REST_API_URL: "Vercel KV: compose runs Redis",
      KV_REST_API_TOKEN: "Vercel KV: compose runs Redis",
      PORT: "the image listens on 3000; APP_PORT publishes it",
      DATA_DIR: "the embedded database only: compose sets DATABASE_URL",
      WEBHOOKS_ALLOW_LOOPBACK: "development and tests only",
      RATE_LIMIT_WINDOW_MS: "tests only: production counts per minute",
      CHROMIUM_PATH: "the browser tests'",
    };
    const app = services.app?.environment ?? {};
    expect([...documented].filter((name) => !(name in app) && !(name in notForCompose))).toEqual([]);
    for (const name of Object.keys(notForCompose)) expect(documented, name).toContain(name);
  });
});
