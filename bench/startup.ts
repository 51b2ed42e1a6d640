// Start-up times of `npm start` (the compiled server, dist/serve.js, with npm start's Node flags) against a bare
// node:http server: how long from spawning the process to its first 200 on GET /readyz, for the first start on an
// empty embedded database (the build's demo template copied, its key and owner made) and for a restart on that database (targets:
// 5 s and 1.5 s). Runs are interleaved with the bare server's, so load from other processes on the machine falls on
// both; each run also reports the CPU time the server process used until then, which that load does not inflate.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { freePort } from "../test/helpers/ports";
import { median } from "./load";

/** One timed start: wall-clock ms from spawn to the first 200, and the CPU ms (user + system) the process used. */
export interface StartSample {
  wallMs: number;
  cpuMs: number;
}

/** Medians (and every sample) per kind of start; `targets` in ms. */
export interface StartupResult {
  bare: StartSample[];
  firstStart: StartSample[];
  restart: StartSample[];
  medians: { bare: StartSample; firstStart: StartSample; restart: StartSample };
  targets: { firstStartMs: number; restartMs: number };
}

const TARGETS = { firstStartMs: 5_000, restartMs: 1_500 };
// The bare server: node:http answering 200, nothing else loaded.
const BARE_SERVER = `import { createServer } from "node:http";
createServer((req, res) => res.end("ok")).listen(Number(process.env.PORT), "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));`;

/** CPU time of a process so far (utime + stime from /proc, clock ticks of 10 ms), ms; NaN where /proc is missing. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Spawns `args` with Node, polls `http://127.0.0.1:<port><probe>` every 10 ms until it answers 200 (at most
 * `timeoutMs`), then stops the process with SIGTERM and waits for it to exit.
 * @throws Error with the process's output when it exits first or the timeout passes.
 */
async function timeStart(options: {
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  probe: string;
  timeoutMs: number;
}): Promise<StartSample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: { ...options.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-8_000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  try {
    while (performance.now() - started < options.timeoutMs) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before its first 200:\n${output}`);
      const status = await fetch(`http://127.0.0.1:${port}${options.probe}`).then(
        (response) => response.arrayBuffer().then(() => response.status),
        () => 0,
      );
      if (status === 200) return { wallMs: performance.now() - started, cpuMs: cpuMs(child.pid) };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no 200 on ${options.probe} within ${options.timeoutMs} ms:\n${output}`);
  } finally {
    child.kill("SIGTERM");
    await stopped(child);
  }
}

function medianSample(samples: readonly StartSample[]): StartSample {
  return { wallMs: median(samples.map((s) => s.wallMs)), cpuMs: median(samples.map((s) => s.cpuMs)) };
}

/**
 * Measures {@link StartupResult}: `rounds` rounds, each a bare start, a first start of `npm start` on a new empty data
 * directory (embedded database: the demo template copied, key and owner made) and `restartsPerRound` restarts on that directory, each with
 * a bare start before it. `nodeFlags` are npm start's Node flags; `env` the servers' environment (DATABASE_URL and
 * REDIS_URL are removed: the README's first command runs on the embedded defaults).
 */
export async function measureStartup(options: {
  root: string;
  nodeFlags: string[];
  env: NodeJS.ProcessEnv;
  rounds: number;
  restartsPerRound: number;
  log: (line: string) => void;
}): Promise<StartupResult> {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ...env } = options.env;
  const server = [...options.nodeFlags, path.join("dist", "serve.js")];
  const bare = ["--input-type=module", "-e", BARE_SERVER];
  const samples: Omit<StartupResult, "medians" | "targets"> = { bare: [], firstStart: [], restart: [] };
  for (let round = 0; round < options.rounds; round++) {
    const dataDir = mkdtempSync(path.join(tmpdir(), "crm-bench-start-"));
    try {
      const serverEnv = { ...env, DATA_DIR: dataDir, NODE_ENV: "production" as const };
      const run = (args: string[], probe: string, timeoutMs: number) =>
        timeStart({ args, env: serverEnv, cwd: options.root, probe, timeoutMs });
      samples.bare.push(await run(bare, "/", 10_000));
      samples.firstStart.push(await run(server, "/readyz", 120_000));
      for (let restart = 0; restart < options.restartsPerRound; restart++) {
        samples.bare.push(await run(bare, "/", 10_000));
        samples.restart.push(await run(server, "/readyz", 60_000));
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    const last = (list: StartSample[]) => list.at(-1) as StartSample;
    options.log(
      `start-up round ${round + 1}: bare ${last(samples.bare).wallMs.toFixed(0)} ms, first start ${last(samples.firstStart).wallMs.toFixed(0)} ms (CPU ${last(samples.firstStart).cpuMs.toFixed(0)} ms), restart ${last(samples.restart).wallMs.toFixed(0)} ms (CPU ${last(samples.restart).cpuMs.toFixed(0)} ms)`,
    );
  }
  return {
    ...samples,
    medians: {
      bare: medianSample(samples.bare),
      firstStart: medianSample(samples.firstStart),
      restart: medianSample(samples.restart),
    },
    targets: TARGETS,
  };
}
