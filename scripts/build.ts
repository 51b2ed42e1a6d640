// `npm run build`, on a supported Node (obtaining Node 24 when the machine's is older, as `npm start` and `npm test`
// do): generates the Prisma client, builds the Next.js app, then compiles the server, the migrations and the admin
// command into dist/ with the embedded database's template (scripts/build-server.ts). Stops at the first step that
// fails, with its status.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ensureSupportedNode } from "./node-runtime";

const root = path.resolve(import.meta.dirname, "..");

/** Runs a package's command-line script on this Node; exits with its status when it fails. */
function step(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(process.execPath, [path.join(root, "node_modules", script), ...args], {
    cwd: root,
    env,
    stdio: "inherit",
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

await ensureSupportedNode(root);
// Imported on the supported Node only: esbuild and PGlite load nothing on the one that re-runs this file.
const { buildEmbeddedTemplate, buildServer } = await import("./build-server");
const { embeddedTemplateDir } = await import("../server/db/embedded");
// The schema engine is never run by `generate`; pointing Prisma at /bin/true spares it the download.
step("prisma/build/index.js", ["generate"], { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: "/bin/true" });
step("next/dist/bin/next", ["build"]);
const started = performance.now();
const files = await buildServer();
const scripts = files.filter((file) => file.endsWith(".js")).length;
console.log(`Compiled the server into dist/ (${scripts} files) in ${Math.round(performance.now() - started)} ms`);
const templateStarted = performance.now();
if (await buildEmbeddedTemplate()) {
  console.log(
    `Made the embedded database's templates (migrated; with the demo book) in ${path.dirname(embeddedTemplateDir())} in ${Math.round(performance.now() - templateStarted)} ms`,
  );
}
