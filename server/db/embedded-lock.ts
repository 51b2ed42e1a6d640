// The lock file of the embedded database (docs/architecture.md, "The embedded database"): which process owns DATA_DIR's
// PGlite and where it serves it. Apart from embedded.ts so that reading it never loads PGlite.
import { existsSync, readFileSync } from "node:fs";
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

/**
 * Whether process `pid` exists and has not ended (a lock whose process is gone is stale). A process killed with
 * `kill -9` stays a zombie until its parent collects it, which an `npm start` whose parent was killed with it can
 * leave for seconds: on Linux a zombie (state Z or X in `/proc/<pid>/stat`) counts as gone, so a restart right after
 * `kill -9` opens the database instead of refusing it.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    // No /proc (not Linux), or the process ended meanwhile: kill's answer stands.
    return !existsSync("/proc");
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
