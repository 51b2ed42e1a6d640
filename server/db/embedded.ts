// The embedded database (DESIGN.md §3): PGlite in DATA_DIR/pglite, opened by exactly one process, which serves it to
// every other process (admin command, migrations, psql) and to itself over the PostgreSQL wire protocol on loopback.
// Two processes opening one data directory lose acknowledged writes (issue #11 A), so a lock file says who owns it.
import { closeSync, mkdirSync, openSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { alive, type EmbeddedLock, embeddedLockPath, readLock } from "./embedded-lock";

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

/**
 * Opens the embedded database of `dataDir` as its one owner (DESIGN.md §3): takes `DATA_DIR/pglite.lock` (a stale lock
 * whose process is gone is taken over), opens PGlite in `DATA_DIR/pglite` (created when missing), and serves it with
 * `@electric-sql/pglite-socket` on 127.0.0.1 at an ephemeral port, which the lock then records.
 * @returns the URL (`postgresql://postgres@127.0.0.1:<port>/postgres`) and `close()`.
 * @throws EmbeddedDatabaseBusyError when a live process already owns the directory.
 */
export async function openEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const file = acquireLock(dataDir);
  let pglite: PGlite | undefined;
  let server: PGLiteSocketServer | undefined;
  try {
    const dir = path.resolve(dataDir, "pglite");
    mkdirSync(dir, { recursive: true });
    pglite = await PGlite.create(dir);
    server = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port: 0, maxConnections: MAX_CONNECTIONS });
    await server.start();
    const url = `postgresql://postgres@${server.getServerConn()}/postgres`;
    const lock: EmbeddedLock = { pid: process.pid, url, startedAt: new Date().toISOString() };
    writeFileSync(file, JSON.stringify(lock), { mode: 0o600 });
    const [openServer, openPglite] = [server, pglite];
    let closing: Promise<void> | undefined;
    return {
      url,
      close: () => {
        closing ??= (async () => {
          await openServer.stop();
          await openPglite.close();
          if (readLock(file)?.pid === process.pid) unlinkSync(file);
        })();
        return closing;
      },
    };
  } catch (error) {
    await server?.stop().catch(() => undefined);
    await pglite?.close().catch(() => undefined);
    if (readLock(file)?.pid === process.pid) unlinkSync(file);
    throw error;
  }
}
