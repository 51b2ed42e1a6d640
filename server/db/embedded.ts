// The embedded database (docs/architecture.md, "The embedded database"): PGlite in DATA_DIR/pglite, opened by exactly
// one process, which serves it to every other process (admin command, migrations, psql) and to itself over the
// PostgreSQL wire protocol on loopback. Two processes opening one data directory lose acknowledged writes, so a lock
// file says who owns it. PGlite runs in a worker thread of its own: its WebAssembly Postgres then uses the second
// core while the main thread serves requests (and, at start-up, imports the server while PGlite opens).
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { alive, type EmbeddedLock, embeddedLockPath, readLock } from "./embedded-lock";
import { migrationsDigest } from "./migration-files";

export { type EmbeddedLock, readLiveEmbeddedLock } from "./embedded-lock";

/** The embedded database opened by this process: the URL it is served at, and how to close it cleanly. */
export interface EmbeddedDatabase {
  url: string;
  /** Stops serving, closes PGlite (a clean shutdown of its data directory) and removes the lock. */
  close(): Promise<void>;
}

/** Another live process owns the data directory; `owner` is its lock. */
export class EmbeddedDatabaseBusyError extends Error {
  readonly owner: EmbeddedLock;
  constructor(dataDir: string, owner: EmbeddedLock) {
    super(
      `The embedded database in ${path.resolve(dataDir)} is already open in process ${owner.pid}${owner.url ? ` (served at ${owner.url})` : ""}; stop that process first, or set DATA_DIR or DATABASE_URL.`,
    );
    this.name = "EmbeddedDatabaseBusyError";
    this.owner = owner;
  }
}

// PostgreSQL settings of the embedded database, as `-c` start parameters after PGlite's own. PostgreSQL's default
// shared_buffers (128 MB) is set up at every open in WebAssembly, about 0.4 s of CPU, and the buffers PostgreSQL
// touches stay in its WebAssembly memory, which never shrinks; 8 MB holds the demo book's hot pages (16 MB measured
// 10 MB more resident after the settings pages, for no faster page), and reads beyond them come from the operating
// system's page cache (docs/architecture.md, "The embedded database").
const SETTINGS = ["-c", "shared_buffers=8MB"];

/**
 * PostgreSQL's contrib extensions the migrations create, by export name and module URL (search: docs/architecture.md,
 * "Search"). PGlite loads an extension's files only when it is named at construction, so every open passes them, the
 * template's build included.
 */
function extensionModules(): Record<string, string> {
  return {
    pg_trgm: import.meta.resolve("@electric-sql/pglite/contrib/pg_trgm"),
    unaccent: import.meta.resolve("@electric-sql/pglite/contrib/unaccent"),
    btree_gin: import.meta.resolve("@electric-sql/pglite/contrib/btree_gin"),
  };
}

/** Most connections the socket serves at once: the server's pool, the admin command, a psql or two. */
const MAX_CONNECTIONS = 64;

/**
 * Takes the lock of `dataDir` for this process: creates the lock file exclusively, taking over a stale one.
 * @throws EmbeddedDatabaseBusyError when a live process holds it.
 */
function acquireLock(dataDir: string): string {
  const file = embeddedLockPath(dataDir);
  mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeFileSync(fd, JSON.stringify({ pid: process.pid, url: null, startedAt: new Date().toISOString() }));
      closeSync(fd);
      return file;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = readLock(file);
    if (owner && alive(owner.pid)) throw new EmbeddedDatabaseBusyError(dataDir, owner);
    // Stale (its process is gone) or unreadable: take it over.
    try {
      unlinkSync(file);
    } catch {
      // Another process removed it first; try again.
    }
  }
  throw new Error(`Could not take the lock ${file}`);
}

// The worker thread's program: plain JavaScript run with `eval` (so it needs no TypeScript loader nor a file of its
// own in the build), importing the two packages by the URLs the main thread resolved. It copies the template into a
// new data directory when given one (off the main thread, which imports the server meanwhile), opens PGlite, serves
// it on an ephemeral loopback port, posts `{ conn }` (or `{ error }`), and on "close" stops both and posts "closed".
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
(async () => {
  let db;
  let server;
  try {
    if (workerData.template) {
      const { cpSync, rmSync, renameSync } = require("node:fs");
      const staging = workerData.dir + ".copying-" + process.pid;
      rmSync(staging, { recursive: true, force: true });
      cpSync(workerData.template, staging, { recursive: true });
      rmSync(workerData.dir, { recursive: true, force: true });
      renameSync(staging, workerData.dir);
    }
    const { PGlite } = await import(workerData.pglite);
    const { PGLiteSocketServer } = await import(workerData.socket);
    const extensions = {};
    for (const [name, url] of Object.entries(workerData.extensions)) extensions[name] = (await import(url))[name];
    db = await PGlite.create(workerData.dir, {
      startParams: [...PGlite.defaultStartParams, ...workerData.settings],
      extensions,
    });
    server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: workerData.maxConnections });
    await server.start();
    parentPort.postMessage({ conn: server.getServerConn() });
  } catch (error) {
    await server?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
    return;
  }
  parentPort.on("message", async (message) => {
    if (message !== "close") return;
    await server.stop().catch(() => undefined);
    await db.close();
    parentPort.postMessage("closed");
  });
})();
`;

/**
 * Which of the build's templates a new data directory starts as (docs/architecture.md, "The embedded database"):
 * `migrated`, every migration applied and nothing else; `demo`, the same with the demo organisation's book seeded
 * (no key, no user, no secret: those are made at the first start).
 */
export type EmbeddedTemplate = "migrated" | "demo";

/**
 * Where `npm run build` leaves a cleanly closed data directory of the installed PGlite version with every migration
 * of `prisma/migrations` applied (`dist/pglite-<version>-<migrations digest>/`, resolved from the working directory
 * like the migrations folder; {@link migrationsDigest}), and beside it the same with the demo book seeded (`…-demo/`).
 * A first start copies one instead of running PGlite's initdb, the migrations and the demo seed, which cost several
 * seconds of CPU and leave their memory in PGlite's WebAssembly heap (docs/architecture.md, "The embedded database");
 * a build with other migrations or another PGlite makes other templates.
 */
export function embeddedTemplateDir(kind: EmbeddedTemplate = "migrated"): string {
  const entry = fileURLToPath(import.meta.resolve("@electric-sql/pglite"));
  const manifest = path.join(path.dirname(entry), "..", "package.json");
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  return path.resolve("dist", `pglite-${version}-${migrationsDigest()}${kind === "demo" ? "-demo" : ""}`);
}

/**
 * The template a new data directory `dir` starts as ({@link embeddedTemplateDir}): `kind`, or the migrated one when the
 * build left no demo template; null when `dir` already holds files or the build left no template for this PGlite
 * version and these migrations. The worker thread copies it beside `dir` and renames the copy into place, so a crash
 * mid-copy leaves no half directory PGlite would take for a database.
 */
function templateFor(dir: string, kind: EmbeddedTemplate): string | null {
  if (existsSync(dir) && readdirSync(dir).length > 0) return null;
  const kinds: EmbeddedTemplate[] = kind === "demo" ? ["demo", "migrated"] : ["migrated"];
  for (const candidate of kinds) {
    let template: string;
    try {
      template = embeddedTemplateDir(candidate);
    } catch {
      // No migrations folder here: no template to pick; the migration runner reports the missing folder.
      return null;
    }
    if (existsSync(path.join(template, "PG_VERSION"))) return template;
  }
  return null;
}

/** The worker's first message: where it serves the database, or why it could not open it. */
type WorkerReply = { conn: string } | { error: string };

function firstMessage(worker: Worker): Promise<WorkerReply> {
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the embedded database's thread exited with ${code}`)));
  });
}

/**
 * Opens the embedded database of `dataDir` as its one owner: takes `DATA_DIR/pglite.lock` (a stale lock whose process
 * is gone is taken over), opens PGlite in `DATA_DIR/pglite` (created when missing, from the build's template when
 * there is one: {@link embeddedTemplateDir}) in a worker thread, and serves it
 * with `@electric-sql/pglite-socket` on 127.0.0.1 at an ephemeral port, which the lock then records.
 * @param options.template which of the build's templates a new directory starts as (default `migrated`; `demo` falls
 *   back to it when the build made none); false: a new directory is made by PGlite's initdb, without migrations (the
 *   templates' own build; tests of the migration runner).
 * @param options.settings more PostgreSQL settings (`-c name=value` pairs) for this open only.
 * @returns the URL (`postgresql://postgres@127.0.0.1:<port>/postgres`) and `close()`.
 * @throws EmbeddedDatabaseBusyError when a live process already owns the directory; Error with PGlite's message when
 *         the directory cannot be opened.
 */
export async function openEmbeddedDatabase(
  dataDir: string,
  options: { template?: EmbeddedTemplate | false; settings?: readonly string[] } = {},
): Promise<EmbeddedDatabase> {
  const file = acquireLock(dataDir);
  let worker: Worker | undefined;
  try {
    const dir = path.resolve(dataDir, "pglite");
    const template = options.template === false ? null : templateFor(dir, options.template ?? "migrated");
    if (!template) mkdirSync(dir, { recursive: true });
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        dir,
        pglite: import.meta.resolve("@electric-sql/pglite"),
        socket: import.meta.resolve("@electric-sql/pglite-socket"),
        extensions: extensionModules(),
        maxConnections: MAX_CONNECTIONS,
        settings: [...SETTINGS, ...(options.settings ?? [])],
        template,
      },
    });
    const reply = await firstMessage(worker);
    if ("error" in reply) throw new Error(`The embedded database in ${dir} could not be opened: ${reply.error}`);
    const url = `postgresql://postgres@${reply.conn}/postgres`;
    const lock: EmbeddedLock = { pid: process.pid, url, startedAt: new Date().toISOString() };
    writeFileSync(file, JSON.stringify(lock), { mode: 0o600 });
    const thread = worker;
    let closing: Promise<void> | undefined;
    return {
      url,
      close: () => {
        closing ??= (async () => {
          const closed = new Promise<unknown>((resolve) => {
            thread.once("message", resolve);
            thread.once("exit", resolve);
          });
          thread.postMessage("close");
          await closed;
          await thread.terminate();
          if (readLock(file)?.pid === process.pid) unlinkSync(file);
        })();
        return closing;
      },
    };
  } catch (error) {
    await worker?.terminate();
    if (readLock(file)?.pid === process.pid) unlinkSync(file);
    throw error;
  }
}
