// The last step of `npm run build`: compiles what a production server runs besides Next.js's own build (docs/
// architecture.md, "Running in production") to JavaScript with esbuild, so serving needs Node.js alone (no tsx,
// no TypeScript): dist/serve.js (`npm start`), dist/migrate.js (the migrations) and dist/admin.js (the operator
// command), ES modules sharing code through dist/chunks/. The Prisma client generated into server/db/generated is
// bundled in, so a production install needs no `prisma generate`; packages stay imports of node_modules, so a
// telemetry SDK can still patch them at run time.
import { rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");

/** The entry points, by the file name they get in dist/. */
export const SERVER_ENTRY_POINTS = {
  serve: "scripts/serve.ts",
  migrate: "scripts/migrate.ts",
  admin: "scripts/admin.ts",
} as const;

/**
 * Compiles {@link SERVER_ENTRY_POINTS} into `outdir` (default `dist/`, emptied first): bundled, ESM for Node 22, with
 * code shared between entries split into `chunks/` and dynamic imports kept as separate chunks (loaded only when
 * reached), every package of node_modules left as an import, source maps beside the files (Node reads them only with
 * `--enable-source-maps`).
 * @returns the output files, relative to the project.
 * @throws Error from esbuild naming the file and line that did not compile.
 */
export async function buildServer(outdir = path.join(root, "dist")): Promise<string[]> {
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: SERVER_ENTRY_POINTS,
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    packages: "external",
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: "linked",
    metafile: true,
    logLevel: "warning",
  });
  return Object.keys(result.metafile.outputs);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const started = performance.now();
  const files = await buildServer();
  const scripts = files.filter((file) => file.endsWith(".js")).length;
  console.log(`Compiled the server into dist/ (${scripts} files) in ${Math.round(performance.now() - started)} ms`);
}
