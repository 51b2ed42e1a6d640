// The last step of `npm run build` (scripts/build.ts): compiles what a production server runs besides Next.js's own
// build (docs/architecture.md, "Running in production") to JavaScript with esbuild, so serving needs Node.js alone (no
// tsx, no TypeScript): dist/serve.js (`npm start`), dist/migrate.js (the migrations) and dist/admin.js (the operator
// command), ES modules sharing code through dist/chunks/. The Prisma client generated into server/db/generated is
// bundled in, so a production install needs no `prisma generate`; packages stay imports of node_modules, so a
// telemetry SDK can still patch them at run time. It also leaves in dist/ an initialised, migrated embedded database,
// and the same with the demo book seeded, for first starts to copy.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
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
 * Leaves cleanly closed PGlite data directories of the installed PGlite version in dist/, which a first start on the
 * embedded database copies instead of running initdb, the migrations and the demo seed: every migration applied in
 * `dist/pglite-<version>-<migrations digest>/` (`embeddedTemplateDir("migrated")`), kept across builds while the PGlite
 * version and the migrations stay, and the same with the demo organisation's book seeded beside it (`…-demo/`), made
 * again whenever the compiled server (dist/, the seed's code) changed. Other templates are removed.
 * @returns whether a template was made now.
 * @throws Error from PGlite, the migration runner (the message names the migration) or the demo seed.
 */
export async function buildEmbeddedTemplate(): Promise<boolean> {
  const template = embeddedTemplateDir("migrated");
  const demo = embeddedTemplateDir("demo");
  const demoSource = `${demo}.source`;
  const parent = path.dirname(template);
  if (existsSync(parent)) {
    for (const entry of readdirSync(parent)) {
      const other = path.join(parent, entry);
      if (entry.startsWith("pglite-") && ![template, demo, demoSource].includes(other)) {
        rmSync(other, { recursive: true, force: true });
      }
    }
  }
  let made = false;
  if (!existsSync(path.join(template, "PG_VERSION"))) {
    // Made like any new data directory (initdb, then the migrations through the socket), in a staging folder named so
    // that it is removed above if the build stops half-way.
    const staging = `${template}.building`;
    rmSync(staging, { recursive: true, force: true });
    const database = await openEmbeddedDatabase(staging, { template: false });
    try {
      await migrateDatabase({ url: database.url }, { log: () => undefined });
    } finally {
      await database.close();
    }
    renameSync(path.join(staging, "pglite"), template);
    rmSync(staging, { recursive: true, force: true });
    made = true;
  }
  const source = serverDigest(template);
  if (
    !existsSync(path.join(demo, "PG_VERSION")) ||
    !existsSync(demoSource) ||
    readFileSync(demoSource, "utf8") !== source
  ) {
    rmSync(demo, { recursive: true, force: true });
    const staging = `${demo}.building`;
    rmSync(staging, { recursive: true, force: true });
    // A process of its own: the seed runs the server's modules, whose database is one per process.
    const seeded = spawnSync(process.execPath, ["--import", "tsx", path.join("scripts", "seed-demo-template.ts")], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: "", DATA_DIR: staging, LOG_LEVEL: "warn" },
      stdio: "inherit",
    });
    if (seeded.status !== 0)
      throw new Error(`Seeding the demo template failed (exit ${seeded.status ?? seeded.signal})`);
    renameSync(path.join(staging, "pglite"), demo);
    rmSync(staging, { recursive: true, force: true });
    writeFileSync(demoSource, source);
    made = true;
  }
  return made;
}

/** A digest of the compiled server in dist/ and of the migrated template it seeds from: what the demo template is of. */
function serverDigest(template: string): string {
  const hash = createHash("sha256").update(path.basename(template));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.startsWith("pglite-")) walk(file);
      } else if (entry.name.endsWith(".js")) {
        hash.update(`${path.relative(dir, file)}\0`).update(readFileSync(file));
      }
    }
  };
  walk(path.join(root, "dist"));
  return hash.digest("hex");
}
