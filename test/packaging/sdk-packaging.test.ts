// The client as a user gets it, both ways sdk/README.md gives: the packed tarball (`npm pack` builds dist/ through the
// package's `prepare` script) and the folder itself as a dependency (`npm install <repository>/sdk`, whose `prepare`
// builds dist/ in place). Each goes into an empty project outside the repository, where an example using the resource
// methods (a hard delete with `force: true` among them) is compiled with `tsc --strict` against the installed
// declarations and run against a live server; with the organisation's custom fields as types written by
// `npm run sdk:generate -- --custom-fields`, which the compiler then holds the example to.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { customFieldTypesText } from "../../scripts/sdk-generate";
import { client, createTestOrg, startApi, type TestServer } from "../helpers/api";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const SDK = path.join(ROOT, "sdk");
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
// Installs use the packages already in npm's cache when it has them (this machine's only network is the registry).
const INSTALL = ["install", "--no-audit", "--no-fund", "--prefer-offline"];

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startApi();
  dir = mkdtempSync(path.join(os.tmpdir(), "sdk-user-"));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

// The user's project has no @types/node: the example declares the one Node global it reads.
const EXAMPLE = `import { ApiError, createClient } from "@msp-crm/sdk";
import type { CustomFields } from "./crm-custom-fields.js";
declare const process: { env: Record<string, string | undefined> };

const crm = createClient({ apiKey: process.env.CRM_KEY ?? "", baseUrl: process.env.CRM_URL });
const created = await crm.accounts.create({ name: "Packaged Ltd" });
let count = 0;
for await (const account of crm.accounts.list({ limit: 10 })) if (account.id === created.id) count++;
const partial = await crm.accounts.bulk({ accounts: [{ name: "Bulk Ltd" }, { name: "" }] }, { mode: "partial" });
const failed: number = partial.failed;
const whole = await crm.accounts.bulk({ accounts: [{ name: "Whole Ltd" }] });
const updated: number = whole.updated;
const read = await crm.GET("/accounts/{id}", { params: { path: { id: created.id } } });
try {
  await crm.accounts.get("nosuchaccount00");
} catch (error) {
  if (error instanceof ApiError) console.log(error.code);
}
console.log(read.name, count, failed, updated);
const removed = await crm.accounts.delete(created.id, { force: true });
const after = await crm.accounts.get(created.id).catch((error: unknown) => (error instanceof ApiError ? error.status : 0));
console.log("deleted" in removed && removed.deleted, after);

const typed = createClient<CustomFields>({ apiKey: process.env.CRM_KEY ?? "", baseUrl: process.env.CRM_URL });
const tiered = await typed.accounts.create({ name: "Typed Ltd", customFields: { seats: 12, contract_tier: "gold" } });
const seats: number | undefined = tiered.customFields.seats;
const tier: "gold" | "silver" | undefined = tiered.customFields.contract_tier;
// @ts-expect-error seats is a number
const wrong: string | undefined = (await typed.accounts.get(tiered.id)).customFields.seats;
// @ts-expect-error the organisation has no such field
await typed.accounts.update(tiered.id, { customFields: { nope: 1 } }).catch(() => undefined);
await typed.accounts.update(tiered.id, { customFields: { contract_tier: null } });
let total = 0;
for await (const account of typed.accounts.list({ "customFields.seats[gte]": 10 })) total += account.customFields.seats ?? 0;
console.log(seats, tier, total, typeof wrong);
`;

/** An empty ESM project at `project` with the example and a strict tsconfig, no dependency yet. */
function userProject(project: string): void {
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, "package.json"), JSON.stringify({ private: true, type: "module" }));
  writeFileSync(
    path.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2023", "DOM"],
        types: [],
        outDir: "out",
      },
      files: ["example.ts"],
    }),
  );
  writeFileSync(path.join(project, "example.ts"), EXAMPLE);
}

/**
 * Gives a new organisation two custom fields, writes them as types beside the example (what `npm run sdk:generate --
 * --custom-fields` writes), compiles the project's example with tsc --strict, runs it against the test server, returns
 * its output lines.
 */
async function compileAndRun(project: string): Promise<string[]> {
  const org = await createTestOrg();
  const api = client(server.url, org.key);
  await api("POST", "/custom-fields", { resource: "account", key: "seats", label: "Seats", type: "number" });
  await api("POST", "/custom-fields", {
    resource: "account",
    key: "contract_tier",
    label: "Tier",
    type: "select",
    options: [
      { value: "gold", label: "Gold" },
      { value: "silver", label: "Silver" },
    ],
  });
  const fields = await customFieldTypesText({ baseUrl: server.url, apiKey: org.key });
  expect(fields).toContain("export interface CustomFields");
  writeFileSync(path.join(project, "crm-custom-fields.ts"), fields);
  await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: project });
  const { stdout } = await run(process.execPath, [path.join(project, "out", "example.js")], {
    cwd: project,
    env: { ...process.env, CRM_KEY: org.key, CRM_URL: server.url },
  });
  return stdout.trim().split("\n");
}

it("npm pack builds dist/ itself; the tarball installs in an empty project, compiles with tsc --strict and runs", {
  timeout: 180_000,
}, async () => {
  rmSync(path.join(SDK, "dist"), { recursive: true, force: true });
  const { stdout: packed } = await run(NPM, ["pack", "--pack-destination", dir, "--json"], { cwd: SDK });
  const [info] = JSON.parse(packed) as Array<{ filename: string; size: number; files: Array<{ path: string }> }>;
  if (!info) throw new Error("npm pack printed nothing");
  expect(info.files.map((file) => file.path).sort()).toEqual(
    expect.arrayContaining([
      "README.md",
      "dist/index.d.ts",
      "dist/index.js",
      "dist/resources.d.ts",
      "dist/resources.js",
      "dist/types.d.ts",
      "package.json",
    ]),
  );
  console.log(`packed size: ${info.size} bytes (${info.files.length} files)`);

  const project = path.join(dir, "from-tarball");
  userProject(project);
  await run(NPM, [...INSTALL, path.join(dir, info.filename)], { cwd: project });
  // A copy, with the dependencies the package declares installed beside it in the user's project.
  const installed = path.join(project, "node_modules", "@msp-crm", "sdk");
  expect(existsSync(path.join(installed, "dist", "index.js"))).toBe(true);
  const manifest = JSON.parse(readFileSync(path.join(SDK, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  for (const dependency of Object.keys(manifest.dependencies))
    expect(existsSync(path.join(project, "node_modules", dependency, "package.json")), dependency).toBe(true);
  expect(await compileAndRun(project)).toEqual(["not_found", "Packaged Ltd 1 1 0", "true 404", "12 gold 12 number"]);
});

it("npm install <repository>/sdk as a folder dependency builds dist/ (prepare) and the same program runs", {
  timeout: 180_000,
}, async () => {
  rmSync(path.join(SDK, "dist"), { recursive: true, force: true });
  const project = path.join(dir, "from-folder");
  userProject(project);
  await run(NPM, [...INSTALL, SDK], { cwd: project });
  expect(existsSync(path.join(SDK, "dist", "index.js")), "prepare compiled sdk/dist").toBe(true);
  expect(existsSync(path.join(project, "node_modules", "@msp-crm", "sdk", "dist", "index.d.ts"))).toBe(true);
  expect(await compileAndRun(project)).toEqual(["not_found", "Packaged Ltd 1 1 0", "true 404", "12 gold 12 number"]);
});

it("documents its real dependencies: sdk/README.md and the README name each, and the sources import no other", () => {
  const manifest = JSON.parse(readFileSync(path.join(SDK, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const declared = Object.keys(manifest.dependencies).sort();
  const imported = new Set<string>();
  for (const file of ["index.ts", "resources.ts", "types.ts", "schema.ts"]) {
    const source = readFileSync(path.join(SDK, "src", file), "utf8");
    for (const [, name] of source.matchAll(/from "([^".][^"]*)"/g))
      if (name && !name.startsWith("node:")) imported.add(name);
  }
  expect([...imported].sort()).toEqual(declared);
  for (const readme of [path.join(SDK, "README.md"), path.join(ROOT, "README.md")]) {
    const text = readFileSync(readme, "utf8");
    for (const name of declared) expect(text, `${readme} names ${name}`).toContain(`\`${name}\``);
    expect(text, `${readme} gives the install command`).toContain("npm install <path-to-this-repository>/sdk");
  }
});
