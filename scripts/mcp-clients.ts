// Runs the official MCP clients against a running server's `/mcp`: the MCP Inspector's CLI (tools/list, a read tool
// and a write tool, on the 2025-11-25 handshake and on the 2026-07-28 stateless revision) and the official
// conformance suite's server scenarios for both revisions, then prints a summary and exits 0 only when nothing failed
// that the baseline (test/packaging/mcp-conformance-expected-failures.yaml) does not name. Our own tests speak the
// protocol through the same SDK the server uses, so they cannot catch a misreading both share; these are clients
// written by others. test/packaging/mcp-clients.test.ts runs it against the built server.
//
//   npx tsx scripts/mcp-clients.ts --url http://127.0.0.1:3000/mcp --key msp_live_… [--out DIR] [--report FILE]
//
// (or MCP_URL and MCP_KEY in the environment). The key should have every scope and high limits (`npm run admin --
// create-key … --limits 100000,100000`), and the server a high RATE_LIMIT_ANONYMOUS_PER_MIN: the suite sends about
// 200 requests in 20 seconds, most of them protocol messages, which count in that window. Exit status: 0 passed, 1 an
// unexpected failure, 2 a usage error or a Node older than the Inspector's.
//
// Versions are pinned. The conformance suite is an exact devDependency, so `npm ci` installs it and its whole tree
// from the lock file. The Inspector cannot be one: it needs Node >= 22.19, and package.json supports 22.15 (a locked
// package refusing a supported Node fails scripts/packaging.test.ts and makes `npm ci` warn), so it runs through
// `npx --yes` at an exact version, which needs the npm registry at run time.
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { type ProxyExchange, startMcpProxy } from "./mcp-proxy";

const root = path.resolve(import.meta.dirname, "..");

/** The Inspector, at the exact version npx runs. */
export const INSPECTOR = { name: "@modelcontextprotocol/inspector", version: "2.12.0" } as const;
/** The conformance suite, at the exact version package.json pins (checked at run time against what is installed). */
export const CONFORMANCE = { name: "@modelcontextprotocol/conformance", version: "0.2.0-alpha.12" } as const;
/** The protocol revisions both clients run: the initialize handshake, and the stateless revision. */
export const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
/** A protocol revision of {@link REVISIONS}. */
export type Revision = (typeof REVISIONS)[number];
/** The conformance baseline: checks that fail for reasons other than a bug, each with its reason beside it. */
export const EXPECTED_FAILURES = path.join(root, "test/packaging/mcp-conformance-expected-failures.yaml");

// The Inspector's `engines` (>=22.19.0).
const INSPECTOR_MIN_NODE: readonly [number, number] = [22, 19];

/** What one Inspector command did, as the report shows it. */
export interface InspectorRun {
  revision: Revision;
  /** What the command checks: `tools/list`, `whoami`, … */
  name: string;
  /** The command line as a person would type it (the key shown as `$KEY`, the URL the server's own). */
  command: string;
  exitCode: number;
  /** Why the run is not as expected; empty when it is. */
  problems: string[];
  /** What went over the wire, from the recording proxy. */
  exchanges: ProxyExchange[];
}

/** One check of the conformance suite, as its results directory holds it. */
export interface ConformanceCheck {
  scenario: string;
  id: string;
  /** SUCCESS, FAILURE, WARNING, SKIPPED or INFO. */
  status: string;
  message?: string;
}

/** One run of the conformance suite (one revision). */
export interface ConformanceRun {
  revision: Revision;
  command: string;
  /** The suite's own verdict with the baseline: 0 when every failure is expected and no entry is stale. */
  exitCode: number;
  scenarios: string[];
  checks: ConformanceCheck[];
  /** Failing checks (FAILURE or WARNING, as the suite counts them) that the baseline names. */
  expectedFailures: string[];
  /** Failing checks the baseline does not name. */
  unexpectedFailures: string[];
  /** Baseline entries whose check passed in this run. */
  staleEntries: string[];
  /** How many HTTP requests the suite sent (what a server's rate limits must allow). */
  requests: number;
  /** Where the suite's output and results are. */
  log: string;
}

/** Everything one run of this script found: what `--report` writes. */
export interface McpClientsReport {
  url: string;
  inspector: { package: string; runs: InspectorRun[] };
  conformance: { package: string; runs: ConformanceRun[] };
  passed: boolean;
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end, killing it after `timeoutMs` (its output then says so). It gets a process group of its
 * own so that the kill reaches what npx started too, not npx alone.
 */
function run(command: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`;
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.once("error", (error) => {
      stderr += `\n${error.message}`;
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

// npx and the clients it starts run on this Node, whatever node comes first on the caller's PATH.
const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
};

function inspector(args: string[], timeoutMs = 120_000): Promise<Ran> {
  return run("npx", ["--yes", `${INSPECTOR.name}@${INSPECTOR.version}`, ...args], timeoutMs, childEnv);
}

/** The first JSON object in a command's output (the Inspector's `--format json` prints one, on stdout or stderr). */
function jsonOf(text: string): Record<string, unknown> | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

interface InspectorCase {
  name: string;
  args: string[];
  /** Whether the run must be refused (a wrong key) rather than succeed. */
  refused?: boolean;
  /** Problems with the result (`result` of the JSON output), none when it is right. */
  check?: (result: Record<string, unknown>) => string[];
}

const READ_ARGS = { resource: "account", limit: 2 };
const WRITE_ARGS = { resource: "account", data: { name: "Inspector" } };

function inspectorCases(): InspectorCase[] {
  const structured = (result: Record<string, unknown>) => (result.structuredContent ?? {}) as Record<string, unknown>;
  return [
    {
      name: "tools/list",
      // --strict: a tool schema other clients cannot use is an error (exit 6), not a one-line count.
      args: ["--method", "tools/list", "--strict"],
      check: (result) => {
        const names = ((result.tools ?? []) as { name: string }[]).map((tool) => tool.name);
        return ["whoami", "list_records", "create_record"]
          .filter((name) => !names.includes(name))
          .map((name) => `tools/list does not list ${name}`);
      },
    },
    {
      name: "whoami",
      args: ["--method", "tools/call", "--tool-name", "whoami"],
      check: (result) =>
        typeof structured(result).organisationId === "string" ? [] : ["whoami returned no organisationId"],
    },
    {
      name: "list_records",
      args: ["--method", "tools/call", "--tool-name", "list_records", "--tool-args-json", JSON.stringify(READ_ARGS)],
      check: (result) => {
        const records = structured(result).records;
        return Array.isArray(records) && records.length <= 2 ? [] : ["list_records returned no list of at most 2"];
      },
    },
    {
      name: "create_record",
      args: ["--method", "tools/call", "--tool-name", "create_record", "--tool-args-json", JSON.stringify(WRITE_ARGS)],
      check: (result) => {
        const record = structured(result).record as { id?: unknown; name?: unknown } | undefined;
        return typeof record?.id === "string" && record.name === "Inspector"
          ? []
          : ["create_record returned no account named Inspector"];
      },
    },
    // A server that let every request in would pass the cases above: a wrong key must be refused, and the
    // Inspector must say so without starting an OAuth flow (--stored-auth-only) since the server offers none.
    { name: "wrong key refused", args: ["--method", "tools/list"], refused: true },
  ];
}

/** What the recording proxy saw that does not fit `revision`: the 2025 handshake, or 2026's discover and header. */
function wireProblems(revision: Revision, exchanges: ProxyExchange[]): string[] {
  const methods = exchanges.map((exchange) => exchange.rpcMethod);
  if (revision === "2025-11-25") {
    const problems = methods.includes("initialize") ? [] : ["no initialize request: not the 2025-11-25 handshake"];
    const other = exchanges.filter((e) => e.protocolVersion !== undefined && e.protocolVersion !== revision);
    if (other.length > 0) problems.push(`MCP-Protocol-Version ${other[0]?.protocolVersion} after a 2025 handshake`);
    return problems;
  }
  const problems = methods.includes("server/discover") ? [] : ["no server/discover request"];
  if (methods.includes("initialize")) problems.push("an initialize request on the stateless revision");
  const other = exchanges.filter((e) => e.method === "POST" && e.protocolVersion !== revision);
  if (other.length > 0) problems.push(`a POST with MCP-Protocol-Version ${other[0]?.protocolVersion ?? "(none)"}`);
  return problems;
}

async function runInspector(url: string, key: string, revision: Revision, spec: InspectorCase): Promise<InspectorRun> {
  // A recording proxy per command (no key: the Inspector's own --header is what is tested), so the exchanges are
  // this command's alone.
  const recorder = await startMcpProxy(url);
  const sentKey = spec.refused ? "msp_live_not_a_key" : key;
  // The default era of a URL on the command line is the 2025 handshake; `modern` is the stateless revision only, with
  // no fallback, so a server that failed it could not pass by answering the handshake instead.
  const era = revision === "2026-07-28" ? ["--protocol-era", "modern"] : [];
  const tail = [...era, "--stored-auth-only", ...spec.args, "--format", "json"];
  try {
    const ran = await inspector(["--cli", recorder.url, "--header", `Authorization: Bearer ${sentKey}`, ...tail]);
    const shown = [
      "npx",
      "--yes",
      `${INSPECTOR.name}@${INSPECTOR.version}`,
      "--cli",
      url,
      "--header",
      `"Authorization: Bearer ${spec.refused ? sentKey : "$KEY"}"`,
      ...tail.map((arg) => (arg.startsWith("{") ? `'${arg}'` : arg)),
    ].join(" ");
    const output = jsonOf(ran.stdout) ?? jsonOf(ran.stderr);
    const problems: string[] = [];
    if (spec.refused) {
      const code = (output?.error as { code?: unknown } | undefined)?.code;
      if (ran.code === 0) problems.push("a wrong key was not refused");
      else if (code !== "auth_required") problems.push(`refused with ${String(code)}, not auth_required`);
      if (!recorder.exchanges.some((exchange) => exchange.status === 401)) problems.push("the server answered no 401");
    } else if (ran.code !== 0 || !output?.result) {
      problems.push(`exit ${ran.code}: ${(ran.stderr || ran.stdout).trim().slice(0, 500)}`);
    } else {
      problems.push(...(spec.check?.(output.result as Record<string, unknown>) ?? []));
    }
    problems.push(...wireProblems(revision, recorder.exchanges));
    return { revision, name: spec.name, command: shown, exitCode: ran.code, problems, exchanges: recorder.exchanges };
  } finally {
    await recorder.close();
  }
}

/** The suite's installed package.json. */
function conformancePackage(): string {
  return createRequire(import.meta.url).resolve(`${CONFORMANCE.name}/package.json`);
}

/** The suite's command (package.json `bin`), run with this Node rather than through npx's lookup. */
function conformanceBin(): string {
  return path.join(path.dirname(conformancePackage()), "dist", "index.js");
}

/** The baseline's entries (`scenario` or `scenario:check-id`), as the suite reads them. */
function baselineEntries(): string[] {
  const parsed = parseYaml(readFileSync(EXPECTED_FAILURES, "utf8")) as { server?: unknown[] } | null;
  return (parsed?.server ?? []).map(String);
}

/** The checks of a results directory the suite wrote: one `server-<scenario>-<timestamp>/checks.json` a scenario. */
function readResults(directory: string): { scenarios: string[]; checks: ConformanceCheck[] } {
  const scenarios: string[] = [];
  const checks: ConformanceCheck[] = [];
  for (const entry of readdirSync(directory).sort()) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry)?.[1];
    if (!scenario) continue;
    scenarios.push(scenario);
    const raw = JSON.parse(readFileSync(path.join(directory, entry, "checks.json"), "utf8")) as {
      id: string;
      status: string;
      errorMessage?: string;
    }[];
    for (const check of raw) checks.push({ scenario, id: check.id, status: check.status, message: check.errorMessage });
  }
  return { scenarios, checks };
}

/**
 * Runs every server scenario the suite has for `revision` (`--suite all`: the pending ones too, such as the
 * header-validation scenario, so the baseline judges them; `--requirements` would leave those unscored) at that
 * revision's wire, through a proxy that adds the key. The suite's exit status is the verdict; the results directory
 * is read again for the summary, and the baseline applied the suite's way (a repeated check id counts once, most
 * severe first) so the report can name what was unexpected.
 */
async function runConformance(url: string, key: string, revision: Revision, out: string): Promise<ConformanceRun> {
  const proxy = await startMcpProxy(url, { key });
  const results = path.join(out, `conformance-${revision}`);
  rmSync(results, { recursive: true, force: true });
  mkdirSync(results, { recursive: true });
  const args = ["server", "--url", proxy.url, "--suite", "all", "--spec-version", revision];
  const baseline = ["--expected-failures", path.relative(root, EXPECTED_FAILURES), "-o", path.relative(root, results)];
  try {
    const ran = await run(process.execPath, [conformanceBin(), ...args, ...baseline], 300_000, childEnv);
    const log = path.join(out, `conformance-${revision}.log`);
    writeFileSync(log, `${ran.stdout}\n${ran.stderr}`);
    const { scenarios, checks } = readResults(results);
    const entries = new Set(baselineEntries());
    const failing = new Set(["FAILURE", "WARNING"]);
    const verdicts = new Map<string, string>();
    const severity = ["SUCCESS", "SKIPPED", "INFO", "WARNING", "FAILURE"];
    for (const check of checks) {
      const name = `${check.scenario}:${check.id}`;
      const before = verdicts.get(name);
      if (!before || severity.indexOf(check.status) > severity.indexOf(before)) verdicts.set(name, check.status);
    }
    const expected = (name: string) => entries.has(name) || entries.has(name.split(":")[0] as string);
    const failed = [...verdicts].filter(([, status]) => failing.has(status)).map(([name]) => name);
    return {
      revision,
      command: `npx conformance ${args.join(" ").replace(proxy.url, "<proxy adding the key>")} ${baseline.join(" ")}`,
      exitCode: ran.code,
      scenarios,
      checks,
      expectedFailures: failed.filter(expected),
      unexpectedFailures: failed.filter((name) => !expected(name)),
      staleEntries: [...verdicts].filter(([name, status]) => status === "SUCCESS" && entries.has(name)).map(([n]) => n),
      requests: proxy.exchanges.length,
      log,
    };
  } finally {
    await proxy.close();
  }
}

function count(checks: ConformanceCheck[], status: string): number {
  return checks.filter((check) => check.status === status).length;
}

/** The summary a person reads; the report file has the details. */
function summarise(report: McpClientsReport): string {
  const lines = [`MCP clients against ${report.url}`, "", `${report.inspector.package} (npx), CLI mode:`];
  for (const revision of REVISIONS) {
    const runs = report.inspector.runs.filter((one) => one.revision === revision);
    const era = revision === "2026-07-28" ? "--protocol-era modern" : "default era";
    lines.push(`  ${revision} (${era}):`);
    for (const one of runs) {
      lines.push(`    ${one.problems.length === 0 ? "ok  " : "FAIL"} ${one.name.padEnd(18)} exit ${one.exitCode}`);
      for (const problem of one.problems) lines.push(`         ${problem}`);
    }
  }
  lines.push(
    "",
    `${report.conformance.package}, server scenarios (--suite all), baseline ${path.relative(root, EXPECTED_FAILURES)}:`,
  );
  for (const one of report.conformance.runs) {
    const { checks } = one;
    lines.push(
      `  ${one.revision}: ${one.scenarios.length} scenarios, ${checks.length} checks: ${count(checks, "SUCCESS")} passed, ` +
        `${count(checks, "FAILURE")} failed, ${count(checks, "WARNING")} warnings, ${count(checks, "SKIPPED")} skipped, ` +
        `${count(checks, "INFO")} info; ${one.expectedFailures.length} failing checks in the baseline, ` +
        `${one.unexpectedFailures.length} not; ${one.requests} requests; suite exit ${one.exitCode} ` +
        `(log: ${path.relative(root, one.log)})`,
    );
    for (const scenario of one.scenarios) {
      const own = checks.filter((check) => check.scenario === scenario);
      const bad = own.filter((check) => check.status === "FAILURE" || check.status === "WARNING");
      const unexpected = bad.filter((check) => one.unexpectedFailures.includes(`${scenario}:${check.id}`));
      // "base": it fails only checks the baseline names.
      const mark = bad.length === 0 ? "ok  " : unexpected.length === 0 ? "base" : "FAIL";
      lines.push(`    ${mark} ${scenario.padEnd(48)} ${count(own, "SUCCESS")}/${own.length} passed`);
    }
    for (const name of one.unexpectedFailures) lines.push(`    unexpected failure: ${name}`);
    for (const name of one.staleEntries) lines.push(`    stale baseline entry (now passes): ${name}`);
  }
  lines.push("", `mcp-clients: ${report.passed ? "PASSED" : "FAILED"}`);
  return lines.join("\n");
}

/**
 * Runs the Inspector commands of both revisions, then the conformance suite for both revisions, against `url` (the
 * server's `/mcp`) with `key`. Results go under `out` (the suite's results directories and logs).
 */
export async function runMcpClients(url: string, key: string, out: string): Promise<McpClientsReport> {
  mkdirSync(out, { recursive: true });
  const installed = JSON.parse(readFileSync(conformancePackage(), "utf8")) as { version: string };
  const runs: InspectorRun[] = [];
  // Fetches the Inspector once (npx's cache), before commands that would otherwise race to install it.
  const version = await inspector(["--version"], 300_000);
  if (version.code !== 0 || !version.stdout.includes(INSPECTOR.version)) {
    throw new Error(`npx could not run ${INSPECTOR.name}@${INSPECTOR.version}:\n${version.stderr || version.stdout}`);
  }
  for (const revision of REVISIONS) {
    for (const spec of inspectorCases()) runs.push(await runInspector(url, key, revision, spec));
  }
  const conformance: ConformanceRun[] = [];
  for (const revision of REVISIONS) conformance.push(await runConformance(url, key, revision, out));
  if (installed.version !== CONFORMANCE.version) {
    conformance.forEach((one) => {
      one.unexpectedFailures.push(`installed ${CONFORMANCE.name} is ${installed.version}, not ${CONFORMANCE.version}`);
    });
  }
  const passed =
    runs.every((one) => one.problems.length === 0) &&
    conformance.every((one) => one.exitCode === 0 && one.unexpectedFailures.length === 0 && one.checks.length > 0);
  return {
    url,
    inspector: { package: `${INSPECTOR.name}@${INSPECTOR.version}`, runs },
    conformance: { package: `${CONFORMANCE.name}@${installed.version}`, runs: conformance },
    passed,
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: process.env.MCP_URL },
      key: { type: "string", default: process.env.MCP_KEY },
      out: { type: "string", default: path.join(root, ".ci/tmp/mcp-clients") },
      report: { type: "string" },
    },
    strict: true,
  });
  if (!values.url || !values.key) {
    console.error("Usage: tsx scripts/mcp-clients.ts --url <server>/mcp --key <API key> [--out DIR] [--report FILE]");
    return 2;
  }
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  const [needMajor, needMinor] = INSPECTOR_MIN_NODE;
  if (major < needMajor || (major === needMajor && minor < needMinor)) {
    console.error(`${INSPECTOR.name} needs Node >= ${needMajor}.${needMinor}; this is ${process.versions.node}`);
    return 2;
  }
  const report = await runMcpClients(values.url, values.key, path.resolve(values.out));
  if (values.report) writeFileSync(values.report, `${JSON.stringify(report, null, 2)}\n`);
  console.log(summarise(report));
  return report.passed ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
