// The lock file of the embedded database (docs/architecture.md, "The embedded database"): which process owns DATA_DIR's
// PGlite and where it serves it. Apart from embedded.ts so that reading it never loads PGlite.
import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * What `DATA_DIR/pglite.lock` holds while a process owns the embedded database: its pid, the URL it serves the
 * database at (`postgresql://postgres@127.0.0.1:<port>/postgres`; null while it is still starting) and since when
 * (ISO 8601).
 */
export interface EmbeddedLock {
  pid: number;
  url: string | null;
  startedAt: string;
}

/** Path of the lock file of a data directory. */
export function embeddedLockPath(dataDir: string): string {
  return path.resolve(dataDir, "pglite.lock");
}

/** Whether process `pid` exists (a lock whose process is gone is stale). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The lock in `file`, or null when there is none or it is unreadable. */
export function readLock(file: string): EmbeddedLock | null {
  try {
    const lock = JSON.parse(readFileSync(file, "utf8")) as EmbeddedLock;
    return Number.isInteger(lock.pid) ? lock : null;
  } catch {
    return null;
  }
}

/**
 * The live owner of a data directory's embedded database, from its lock file.
 * @returns the lock, or null when there is no lock or its process is gone (a stale lock, left by `kill -9`).
 */
export function readLiveEmbeddedLock(dataDir: string): EmbeddedLock | null {
  const lock = readLock(embeddedLockPath(dataDir));
  return lock && alive(lock.pid) ? lock : null;
}
