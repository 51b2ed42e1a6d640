// The client as a user gets it. `npm pack` of sdk/ (built with tsc), installed from the tarball in an empty project, an
// example using the resource methods compiled with `tsc --strict` against its declarations and run against a live
// server.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestOrg, startApi, type TestServer } from "../helpers/api";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const SDK = path.join(ROOT, "sdk");
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

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
`;

it("packs, installs from the tarball, compiles with tsc --strict and runs", { timeout: 180_000 }, async () => {
  await run(process.execPath, [TSC, "-p", path.join(SDK, "tsconfig.json")], { cwd: ROOT });
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

  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ private: true, type: "module" }));
  writeFileSync(
    path.join(dir, "tsconfig.json"),
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
  writeFileSync(path.join(dir, "example.ts"), EXAMPLE);
  await run(NPM, ["install", "--no-audit", "--no-fund", "--prefer-offline", path.join(dir, info.filename)], {
    cwd: dir,
  });
  await run(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: dir });
  const org = await createTestOrg();
  const { stdout } = await run(process.execPath, [path.join(dir, "out", "example.js")], {
    cwd: dir,
    env: { ...process.env, CRM_KEY: org.key, CRM_URL: server.url },
  });
  expect(stdout.trim().split("\n")).toEqual(["not_found", "Packaged Ltd 1 1 0"]);
  const installed = path.join(dir, "node_modules", "@msp-crm", "sdk", "dist");
  expect(readdirSync(installed).length).toBeGreaterThan(0);
  expect(statSync(path.join(installed, "index.js")).size).toBeGreaterThan(0);
});
