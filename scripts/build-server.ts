// The last step of `npm run build` (scripts/build.ts): compiles what a production server runs besides Next.js's own
// build (docs/architecture.md, "Running in production") to JavaScript with esbuild, so serving needs Node.js alone (no
// tsx, no TypeScript): dist/serve.js (`npm start`), dist/migrate.js (the migrations) and dist/admin.js (the operator
// command), ES modules sharing code through dist/chunks/. The Prisma client generated into server/db/generated is
// bundled in, so a production install needs no `prisma generate`; packages stay imports of node_modules, so a
// telemetry SDK can still patch them at run time. It also leaves an initialised, migrated embedded database in dist/
// for first starts to copy.
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { embeddedTemplateDir, openEmbeddedDatabase } from "../server/db/embedded";
import { migrateDatabase } from "../server/db/migrate";

const root = path.resolve(import.meta.dirname, "..");

/** The entry points, by the file name they get in dist/. */
export const SERVER_ENTRY_POINTS = {
  serve: "scripts/serve.ts",
  migrate: "scripts/migrate.ts",
  admin: "scripts/admin.ts",
} as const;

/**
 * Compiles {@link SERVER_ENTRY_POINTS} into `outdir` (default `dist/`, emptied first but for the embedded database's
 * template, see {@link buildEmbeddedTemplate}): bundled, ESM for Node 22, with
 * code shared between entries split into `chunks/` and dynamic imports kept as separate chunks (loaded only when
 * reached), every package of node_modules left as an import, source maps beside the files (Node reads them only with
 * `--enable-source-maps`).
 * @returns the output files, relative to the project.
 * @throws Error from esbuild naming the file and line that did not compile.
 */
export async function buildServer(outdir = path.join(root, "dist")): Promise<string[]> {
  if (existsSync(outdir)) {
    for (const entry of readdirSync(outdir)) {
      if (!entry.startsWith("pglite-")) rmSync(path.join(outdir, entry), { recursive: true, force: true });
    }
  }
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

/**
 * Leaves a cleanly closed PGlite data directory of the installed PGlite version with every migration applied in
 * `dist/pglite-<version>-<migrations digest>/` (`embeddedTemplateDir`), which a first start on the embedded database
 * copies instead of running initdb and the migrations. Kept across builds while the PGlite version and the migrations
 * stay; other templates are removed.
 * @returns whether a template was made now.
 * @throws Error from PGlite or the migration runner (the message names the migration).
 */
export async function buildEmbeddedTemplate(): Promise<boolean> {
  const template = embeddedTemplateDir();
  const parent = path.dirname(template);
  if (existsSync(parent)) {
    for (const entry of readdirSync(parent)) {
      const other = path.join(parent, entry);
      if (entry.startsWith("pglite-") && other !== template) rmSync(other, { recursive: true, force: true });
    }
  }
  if (existsSync(path.join(template, "PG_VERSION"))) return false;
  // Made like any new data directory (initdb, then the migrations through the socket), in a staging folder named so
  // that it is removed above if the build stops half-way.
  const staging = `${template}.building`;
  rmSync(staging, { recursive: true, force: true });
  const database = await openEmbeddedDatabase(staging, { fromTemplate: false });
  try {
    await migrateDatabase({ url: database.url }, { log: () => undefined });
  } finally {
    await database.close();
  }
  renameSync(path.join(staging, "pglite"), template);
  rmSync(staging, { recursive: true, force: true });
  return true;
}
