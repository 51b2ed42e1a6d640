// Servers under test run as child processes so the load generator (bench/run.ts) never shares an event loop with them.
import { type ChildProcess, spawn } from "node:child_process";

/** A server started by {@link startServer}: its base URL, its recent output, and how to stop it. */
export interface ChildServer {
  name: string;
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  origin: string;
  /** The spawned process's pid (the server itself when it was started as `node …`). */
  pid: number | undefined;
  /** The last few kilobytes of the child's stdout and stderr, for diagnostics. */
  output(): string;
  /** Stops the child's whole process group (npx → next → node), waiting up to 5 s before SIGKILL. */
  stop(): Promise<void>;
}

const OUTPUT_LIMIT = 16_000;

function collect(child: ChildProcess): () => string {
  let buffer = "";
  const append = (chunk: Buffer) => {
    buffer = (buffer + chunk.toString("utf8")).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  return () => buffer;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // Negative pid: the group we created with `detached`, so npx's grandchildren go too.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Spawns `command args` in its own process group with `env`, then polls `GET <origin>/api/v1/status` until it answers
 * 200.
 * @throws Error (with the child's output) when the child exits first or `readyTimeoutMs` passes.
 */
export async function startServer(options: {
  name: string;
  command: string;
  args: string[];
  port: number;
  env: NodeJS.ProcessEnv;
  cwd: string;
  readyTimeoutMs?: number;
}): Promise<ChildServer> {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = collect(child);
  const origin = `http://127.0.0.1:${options.port}`;
  const server: ChildServer = {
    name: options.name,
    origin,
    pid: child.pid,
    output,
    async stop() {
      if (child.pid === undefined || !groupAlive(child.pid)) return;
      killGroup(child, "SIGTERM");
      // Wait for the whole group, not just npx: the server behind it may still be flushing (a CPU profile, say).
      const deadline = Date.now() + 5_000;
      while (groupAlive(child.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      if (groupAlive(child.pid)) killGroup(child, "SIGKILL");
      await exited(child);
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  let gone = false;
  void exited(child).then(() => {
    gone = true;
  });
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${options.name} exited before it was ready (code ${child.exitCode}):\n${output()}`);
    try {
      const response = await fetch(`${origin}/api/v1/status`, { signal: AbortSignal.timeout(3_000) });
      await response.arrayBuffer();
      if (response.status === 200) return server;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await server.stop();
  throw new Error(`${options.name} did not answer 200 on /api/v1/status within the timeout:\n${output()}`);
}
