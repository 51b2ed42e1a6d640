// A PostgreSQL server of the test's own (initdb + pg_ctl in a temporary directory, on a free port), for tests that
// stop and restart the database: the shared server on 5432 is never touched.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./ports";

/** A running dedicated server: its URL (database `postgres`), and controls. */
export interface DedicatedPostgres {
  url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort();
  return path.join("/usr/lib/postgresql", versions[versions.length - 1] as string, "bin");
}

/** initdb refuses to run as root: run the server tools as the `postgres` user then. */
function run(tool: string, args: string[]): void {
  const command = path.join(binDir(), tool);
  if (process.getuid?.() === 0) execFileSync("runuser", ["-u", "postgres", "--", command, ...args], { stdio: "pipe" });
  else execFileSync(command, args, { stdio: "pipe" });
}

/** Creates, starts and returns a dedicated server with trust authentication on 127.0.0.1. */
export async function startDedicatedPostgres(): Promise<DedicatedPostgres> {
  const root = mkdtempSync(path.join(tmpdir(), "crm-pg-"));
  chmodSync(root, 0o777);
  const dataDir = path.join(root, "data");
  const port = await freePort();
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres", root]);
  run("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${root} -c fsync=off`;
  const start = () => run("pg_ctl", ["-D", dataDir, "-o", options, "-w", "-t", "30", "-l", `${root}/log`, "start"]);
  start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: () => run("pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "stop"]),
    start,
    destroy: () => {
      try {
        run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      } catch {
        // Already stopped.
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
