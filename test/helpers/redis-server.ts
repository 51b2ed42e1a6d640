// A dedicated, throw-away redis-server for tests that stop and restart the store (never the shared one on 6379).
import { type ChildProcess, spawn } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./ports";

/** A redis-server child process on `port`; `stop()` kills it, `start()` starts it again on the same port (empty). */
export interface DedicatedRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Spawns `redis-server` without persistence on a free loopback port and waits until it answers PING. */
export async function startDedicatedRedis(): Promise<DedicatedRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
      { stdio: "ignore" },
    );
    const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => null });
    probe.on("error", () => undefined);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch (error) {
        probe.disconnect();
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  async function stop(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGKILL");
    });
  }

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, start, stop };
}
