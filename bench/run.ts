// Performance report of the public API: `npm run bench` (about 2 minutes), `-- --quick` (under 1 minute), `-- --build`
// to rebuild Next first, `-- --profile` to also CPU-profile the three servers (slower; the numbers then include the
// profiler's overhead) and print their hottest functions; profiles land in bench/results/profiles/.
// Measures, in one run on this machine, against a fresh PostgreSQL database that is dropped afterwards:
//   1. GET /api/v1/accounts/{id} requests/s and p50/p99 through the real Next.js production server, versus a bare
//      node:http + pg server doing the same queries (and the facade on node:http for reference); target ratio ≥ 0.5.
//   2. POST /api/v1/accounts/bulk of 500 new and of 500 existing accounts, versus one raw INSERT … ON CONFLICT DO
//      UPDATE of 500 rows; target ≤ 3× (the worse of the two cases counts).
//   3. The first page of GET /api/v1/accounts?limit=100 versus the page after row 90,000 of 100,000; target ≤ 1.5×.
//   4. The platform layers (bench/platform.ts): GET and POST throughput with rate limiting and audit on and off, and
//      POST with an Idempotency-Key; target: rate limiting + audit together cost ≤ 15% of throughput.
// It is a report, not a test: it exits 0 whatever the numbers, non-zero only when something crashes.
// Servers run as child processes; this process is the load generator. Results: bench/results/latest.json.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { newId } from "../server/db/ids";
import { migrateDatabase } from "../server/db/migrate";
import { freePort } from "../test/helpers/ports";
import { largestProfile, type ProfileSummary, summariseProfile } from "./cpuprofile";
import { type LoadResult, type LoadSample, median, quantile, runLoad, send, summariseLoad } from "./load";
import { LAYER_ENV, measurePlatformLayers } from "./platform";
import { type ChildServer, startServer } from "./servers";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const argv = new Set(process.argv.slice(2));
const QUICK = argv.has("--quick");
const FORCE_BUILD = argv.has("--build");
const CPU_PROFILE = argv.has("--profile");
const PROFILES_DIR = path.join(ROOT, "bench", "results", "profiles");
const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

// Sized so a full run stays well under 5 minutes on 2 cores (excluding a `next build`); --quick roughly halves it.
const PROFILE = QUICK
  ? {
      connections: 16,
      warmupMs: 3_000,
      durationMs: 6_000,
      slices: 2,
      bulkWarmup: 2,
      bulkRuns: 10,
      pageWarmup: 5,
      pageRuns: 20,
    }
  : {
      connections: 16,
      warmupMs: 5_000,
      durationMs: 20_000,
      slices: 4,
      bulkWarmup: 3,
      bulkRuns: 15,
      pageWarmup: 10,
      pageRuns: 40,
    };
const BULK_SIZE = 500;
const SEED_ROWS = 100_000;
const DEEP_ROW = 90_000;
const PAGE_LIMIT = 100;
// Rate limits (spec §8) would turn a load test into a 429 test; the override columns are the operator's escape hatch.
const NO_LIMITS = { perKey: 1_000_000_000, perOrg: 1_000_000_000 };
const TARGETS = { throughput: 0.5, bulk: 3, pagination: 1.5, platform: 0.15 };

const log = (line: string) => console.log(`[bench] ${line}`);

// ---------- clean-up: everything started is undone in reverse order, exactly once, even on Ctrl-C ----------

const cleanups: Array<() => Promise<void>> = [];
let cleaningUp: Promise<void> | undefined;

function cleanupAll(): Promise<void> {
  cleaningUp ??= (async () => {
    for (const undo of cleanups.reverse()) {
      try {
        await undo();
      } catch (error) {
        console.error(`[bench] clean-up step failed: ${(error as Error).message}`);
      }
    }
  })();
  return cleaningUp;
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n[bench] ${signal}: cleaning up`);
    void cleanupAll().finally(() => process.exit(130));
  });
}

// ---------- Next.js build ----------

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "generated" || entry.name === "node_modules") continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * Builds the Next.js app when `.next/BUILD_ID` is missing or `--build` was passed.
 * @returns the BUILD_ID and whether sources changed after it was built (then the numbers describe older code).
 * @throws Error when `next build` fails (its output has already been printed).
 */
async function ensureBuild(): Promise<{ buildId: string; stale: boolean }> {
  const buildIdFile = path.join(ROOT, ".next", "BUILD_ID");
  if (FORCE_BUILD || !existsSync(buildIdFile)) {
    log(FORCE_BUILD ? "--build: running next build" : ".next/BUILD_ID missing: running next build");
    const started = performance.now();
    const child = spawn("npx", ["next", "build"], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: "production" as const, NEXT_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "inherit", "inherit"],
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    if (code !== 0) throw new Error(`next build failed (exit ${code}); see its output above`);
    log(`next build done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  const builtAt = statSync(buildIdFile).mtimeMs;
  const sources = Math.max(newestMtime(path.join(ROOT, "app")), newestMtime(path.join(ROOT, "server")));
  return { buildId: readFileSync(buildIdFile, "utf8").trim(), stale: sources > builtAt };
}

// ---------- database and fixture ----------

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** What the measurements need: two organisations with their keys, and the rows and cursors to ask for. */
interface Fixture {
  /** Organisation for GET by id and bulk upserts. */
  orgId: string;
  key: string;
  accountId: string;
  /** Organisation holding the 100,000 seeded accounts. */
  pagedOrgId: string;
  pagedKey: string;
  /** Id of row 90,000 in the default order (createdAt, id): the cursor of the deep page. */
  deepCursor: string;
  /** Id of row 90,001, which the deep page must start with. */
  deepFirstId: string;
}

/**
 * Migrates the bench database, creates the organisations and keys through the services (the same code path as the
 * operator command), and seeds the paginated organisation with plain SQL (100,000 rows in seconds).
 */
async function prepareFixture(url: string, client: pg.Client): Promise<Fixture> {
  const migrated = await migrateDatabase({ url }, { migrationsDir: path.join(ROOT, "prisma", "migrations") });
  log(`migrated (${migrated.applied.length} migrations)`);

  // Imported only now: server modules must see DATABASE_URL, which points at the bench database from here on.
  const { ensureOrganisation } = await import("../server/services/organisations");
  const { createApiKey } = await import("../server/services/api-keys");
  const { closeDb } = await import("../server/db/client");
  const tag = randomBytes(4).toString("hex");
  const org = await ensureOrganisation(`bench-${tag}`, { name: "Bench", limits: NO_LIMITS });
  const paged = await ensureOrganisation(`bench-paged-${tag}`, { name: "Bench paged", limits: NO_LIMITS });
  const scopes = ["accounts:write"];
  const key = await createApiKey(org.id, { name: "bench", scopes, isTest: false });
  const pagedKey = await createApiKey(paged.id, { name: "bench", scopes, isTest: false });
  await closeDb();

  // Accounts are plain fixture rows: SQL keeps the set-up independent of the account service's evolving signature.
  const accountId = `bench_${tag}`;
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "industry", "employeeCount", "domain", "externalId", "createdAt", "updatedAt")
     VALUES ($1, $2, 'Bench target', 'ACTIVE', 'IT services', 42, 'bench-target.example.com', 'bench-target', now(), now())`,
    [accountId, org.id],
  );

  const seedStarted = performance.now();
  // md5 ids are unique but unrelated to creation order, like cuids; createdAt steps 0.9 ms so a few rows tie and the
  // id tie-breaker of the keyset is exercised.
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "industry", "employeeCount", "domain", "externalId", "createdAt", "updatedAt")
     SELECT 'seed_' || md5(i::text), $1, 'Account ' || i,
            (ARRAY['PROSPECT','ACTIVE','AT_RISK','CHURNED']::"LifecycleStatus"[])[1 + i % 4],
            (ARRAY['IT services','Healthcare','Legal','Retail','Finance'])[1 + i % 5],
            (i * 37) % 5000, 'acct' || i || '.example.com', 'seed-' || i,
            ts, ts
     FROM generate_series(1, $2::int) AS i,
          LATERAL (SELECT TIMESTAMP '2024-01-01 00:00:00' + floor(i * 0.9) * INTERVAL '1 millisecond' AS ts) AS t`,
    [paged.id, SEED_ROWS],
  );
  // Fresh statistics, as a long-lived database would have; otherwise the planner guesses on an unanalysed table.
  await client.query(`VACUUM ANALYZE "Account"`);
  const cursorRows = await client.query<{ id: string }>(
    `SELECT "id" FROM "Account" WHERE "orgId" = $1 ORDER BY "createdAt", "id" OFFSET $2 LIMIT 2`,
    [paged.id, DEEP_ROW - 1],
  );
  const [deepCursor, deepFirst] = cursorRows.rows;
  if (!deepCursor || !deepFirst) throw new Error("seeding produced fewer rows than expected");
  log(
    `seeded ${SEED_ROWS.toLocaleString("en")} accounts in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );

  return {
    orgId: org.id,
    key: key.raw,
    accountId,
    pagedOrgId: paged.id,
    pagedKey: pagedKey.raw,
    deepCursor: deepCursor.id,
    deepFirstId: deepFirst.id,
  };
}

// ---------- 1. GET /accounts/{id} throughput ----------

type ServerKind = "bare" | "facade" | "next";

async function launch(
  kind: ServerKind,
  databaseUrl: string,
  extraEnv: Record<string, string> = {},
): Promise<ChildServer> {
  const port = await freePort();
  const env = {
    ...process.env,
    ...extraEnv,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    NODE_ENV: "production" as const,
    PORT: String(port),
    NEXT_TELEMETRY_DISABLED: "1",
  };
  const started = performance.now();
  // V8 writes the profile when the process exits (every server exits through process.exit on SIGTERM). Node refuses
  // --cpu-prof in NODE_OPTIONS, so a profiled Next runs its CLI under node directly instead of through npx.
  const profiling = CPU_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${path.join(PROFILES_DIR, kind)}`] : [];
  const nextArgs = ["start", "-p", String(port), "-H", "127.0.0.1"];
  const server =
    kind === "next"
      ? await startServer({
          name: "next start",
          ...(CPU_PROFILE
            ? {
                command: process.execPath,
                args: [...profiling, path.join("node_modules", "next", "dist", "bin", "next"), ...nextArgs],
              }
            : { command: "npx", args: ["next", ...nextArgs] }),
          port,
          env,
          cwd: ROOT,
        })
      : await startServer({
          name: `${kind}-server`,
          // `node --import tsx` instead of the tsx CLI: one process, no watcher/IPC wrapper in front of the server.
          command: process.execPath,
          args: [...profiling, "--import", "tsx", path.join("bench", `${kind}-server.ts`)],
          port,
          env,
          cwd: ROOT,
        });
  cleanups.push(() => server.stop());
  log(
    `${kind}${extraEnv.BENCH_DISABLE_LAYERS ? ` without ${extraEnv.BENCH_DISABLE_LAYERS}` : ""}: ready on ${server.origin} after ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return server;
}

/**
 * Throughput of GET by id on each server. All three are up at once and measured in alternating slices, so load that
 * other processes put on this shared machine mid-run spreads over all of them instead of skewing one ratio.
 */
async function measureGet(servers: Record<ServerKind, ChildServer>, fixture: Fixture) {
  const headers = { authorization: `Bearer ${fixture.key}` };
  const kinds = Object.keys(servers) as ServerKind[];
  const urlOf = (kind: ServerKind) => `${servers[kind].origin}/api/v1/accounts/${fixture.accountId}`;
  const load = (kind: ServerKind, durationMs: number) =>
    runLoad({ url: urlOf(kind), headers, connections: PROFILE.connections, durationMs });

  for (const kind of kinds) {
    // A wrong answer measured fast is worth nothing: check once that the endpoint really returns the account.
    const agent = new Agent({ keepAlive: true });
    const probe = await send(agent, urlOf(kind), { headers });
    agent.destroy();
    if (probe.status !== 200 || !probe.body.includes(fixture.accountId)) {
      throw new Error(`${kind}: GET ${urlOf(kind)} answered ${probe.status}: ${probe.body.slice(0, 300)}`);
    }
    await load(kind, PROFILE.warmupMs);
  }
  const samples: Record<ServerKind, LoadSample[]> = { bare: [], facade: [], next: [] };
  for (let slice = 0; slice < PROFILE.slices; slice++) {
    // Rotating the order keeps any one server from always running right after another's burst (GC, autovacuum).
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[(slice + i) % kinds.length] as ServerKind;
      samples[kind].push(await load(kind, PROFILE.durationMs / PROFILE.slices));
    }
  }

  const results = {} as Record<ServerKind, LoadResult>;
  for (const kind of kinds) {
    const result = summariseLoad(samples[kind]);
    results[kind] = result;
    const failures = result.non2xx + result.errors;
    log(
      `${kind}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms` +
        (failures > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ""),
    );
    if (failures > 0) console.error(`[bench] ${kind} output tail:\n${servers[kind].output().slice(-2_000)}`);
  }
  return results;
}

// ---------- 2. bulk upsert ----------

interface BulkItem {
  name: string;
  lifecycleStatus: "PROSPECT" | "ACTIVE" | "AT_RISK" | "CHURNED";
  industry: string;
  employeeCount: number;
  domain: string;
  externalId: string;
}

const LIFECYCLES = ["PROSPECT", "ACTIVE", "AT_RISK", "CHURNED"] as const;

// Every field set and every value changed from one round to the next, so updates really write (updatedAt moves).
function bulkItems(prefix: string, round: number): BulkItem[] {
  return Array.from({ length: BULK_SIZE }, (_, i) => ({
    name: `Bulk ${prefix} ${i} r${round}`,
    lifecycleStatus: LIFECYCLES[(i + round) % LIFECYCLES.length] as BulkItem["lifecycleStatus"],
    industry: `Industry ${(i + round) % 7}`,
    employeeCount: i * 10 + round,
    domain: `${prefix}-${i}.example.com`,
    externalId: `${prefix}-${i}`,
  }));
}

/** Times one HTTP bulk upsert and checks it created/updated every item. */
async function stackBulk(agent: Agent, origin: string, key: string, items: BulkItem[], expect: "created" | "updated") {
  const response = await send(agent, `${origin}/api/v1/accounts/bulk`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ accounts: items }),
  });
  const data =
    response.status === 200 ? (JSON.parse(response.body) as { data?: Record<string, number> }).data : undefined;
  if (data?.[expect] !== items.length) {
    throw new Error(
      `bulk upsert answered ${response.status}, expected ${items.length} ${expect}: ${response.body.slice(0, 300)}`,
    );
  }
  return response.ms;
}

/** Times the hand-written equivalent: one multi-row INSERT … ON CONFLICT DO UPDATE with the same columns. */
async function rawBulk(client: pg.Client, orgId: string, items: BulkItem[]): Promise<number> {
  const now = new Date().toISOString();
  const params: unknown[] = [orgId, now];
  const tuples = items.map((item) => {
    const base = params.length;
    params.push(
      newId(),
      item.name,
      item.lifecycleStatus,
      item.industry,
      item.employeeCount,
      item.domain,
      item.externalId,
    );
    const p = (n: number) => `$${base + n}`;
    return `(${p(1)}, $1, ${p(2)}, ${p(3)}::"LifecycleStatus", ${p(4)}, ${p(5)}::int, ${p(6)}, ${p(7)}, $2::timestamptz AT TIME ZONE 'UTC', $2::timestamptz AT TIME ZONE 'UTC')`;
  });
  const started = performance.now();
  const result = await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "industry", "employeeCount", "domain", "externalId", "createdAt", "updatedAt")
     VALUES ${tuples.join(", ")}
     ON CONFLICT ("orgId", "externalId") DO UPDATE SET
       "name" = EXCLUDED."name", "lifecycleStatus" = EXCLUDED."lifecycleStatus", "industry" = EXCLUDED."industry",
       "employeeCount" = EXCLUDED."employeeCount", "domain" = EXCLUDED."domain", "updatedAt" = EXCLUDED."updatedAt"
     RETURNING "id", "externalId"`,
    params,
  );
  const ms = performance.now() - started;
  if (result.rowCount !== items.length)
    throw new Error(`raw upsert touched ${result.rowCount} rows, expected ${items.length}`);
  return ms;
}

interface BulkCase {
  stackMs: number;
  rawMs: number;
  ratio: number;
  stackSamples: number[];
  rawSamples: number[];
}

function bulkCase(stackSamples: number[], rawSamples: number[]): BulkCase {
  const stackMs = median(stackSamples);
  const rawMs = median(rawSamples);
  return { stackMs, rawMs, ratio: stackMs / rawMs, stackSamples, rawSamples };
}

async function measureBulk(next: ChildServer, fixture: Fixture, client: pg.Client) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  // The rows the update case rewrites; created once, outside the timings.
  await stackBulk(agent, next.origin, fixture.key, bulkItems("stack-upd", 0), "created");
  await rawBulk(client, fixture.orgId, bulkItems("raw-upd", 0));

  const samples = {
    stackNew: [] as number[],
    rawNew: [] as number[],
    stackUpd: [] as number[],
    rawUpd: [] as number[],
  };
  // Interleaved so drift (autovacuum, JIT, cache warmth) hits both sides alike.
  for (let round = 1; round <= PROFILE.bulkWarmup + PROFILE.bulkRuns; round++) {
    const counted = round > PROFILE.bulkWarmup;
    const stackNew = await stackBulk(agent, next.origin, fixture.key, bulkItems(`stack-new${round}`, round), "created");
    const rawNew = await rawBulk(client, fixture.orgId, bulkItems(`raw-new${round}`, round));
    const stackUpd = await stackBulk(agent, next.origin, fixture.key, bulkItems("stack-upd", round), "updated");
    const rawUpd = await rawBulk(client, fixture.orgId, bulkItems("raw-upd", round));
    if (!counted) continue;
    samples.stackNew.push(stackNew);
    samples.rawNew.push(rawNew);
    samples.stackUpd.push(stackUpd);
    samples.rawUpd.push(rawUpd);
  }
  agent.destroy();
  const create = bulkCase(samples.stackNew, samples.rawNew);
  const update = bulkCase(samples.stackUpd, samples.rawUpd);
  log(`bulk create: ${create.stackMs.toFixed(1)} ms vs raw ${create.rawMs.toFixed(1)} ms`);
  log(`bulk update: ${update.stackMs.toFixed(1)} ms vs raw ${update.rawMs.toFixed(1)} ms`);
  return { create, update, ratio: Math.max(create.ratio, update.ratio) };
}

// ---------- 3. keyset pagination ----------

async function measurePagination(next: ChildServer, fixture: Fixture) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { authorization: `Bearer ${fixture.pagedKey}` };
  const firstUrl = `${next.origin}/api/v1/accounts?limit=${PAGE_LIMIT}`;
  const deepUrl = `${firstUrl}&cursor=${fixture.deepCursor}`;
  const page = async (url: string, expectFirstId?: string) => {
    const response = await send(agent, url, { headers });
    const body =
      response.status === 200
        ? (JSON.parse(response.body) as { data: Array<{ id: string }>; hasMore: boolean })
        : undefined;
    if (!body || body.data.length !== PAGE_LIMIT || !body.hasMore) {
      throw new Error(`GET ${url} answered ${response.status}: ${response.body.slice(0, 300)}`);
    }
    if (expectFirstId && body.data[0]?.id !== expectFirstId) {
      throw new Error(`the page after row ${DEEP_ROW} starts with ${body.data[0]?.id}, expected ${expectFirstId}`);
    }
    return response.ms;
  };

  const first: number[] = [];
  const deep: number[] = [];
  for (let round = 1; round <= PROFILE.pageWarmup + PROFILE.pageRuns; round++) {
    const a = await page(firstUrl);
    const b = await page(deepUrl, fixture.deepFirstId);
    if (round <= PROFILE.pageWarmup) continue;
    first.push(a);
    deep.push(b);
  }
  agent.destroy();
  const firstMs = median(first);
  const deepMs = median(deep);
  log(
    `pagination: first page ${firstMs.toFixed(2)} ms, page after row ${DEEP_ROW.toLocaleString("en")} ${deepMs.toFixed(2)} ms`,
  );
  return {
    firstMs,
    deepMs,
    firstP90: quantile(first, 0.9),
    deepP90: quantile(deep, 0.9),
    ratio: deepMs / firstMs,
    firstSamples: first,
    deepSamples: deep,
  };
}

// ---------- report ----------

function printHotSpots(): Record<string, ProfileSummary & { file: string }> {
  const summaries: Record<string, ProfileSummary & { file: string }> = {};
  for (const kind of ["bare", "facade", "next"] as const) {
    const file = largestProfile(path.join(PROFILES_DIR, kind));
    if (!file) {
      log(`${kind}: no CPU profile written`);
      continue;
    }
    const summary = summariseProfile(file, ROOT);
    summaries[kind] = { file: path.relative(ROOT, file), ...summary };
    console.log(`\n${kind} server — share of busy CPU time (${path.relative(ROOT, file)})`);
    console.log("  by package:");
    for (const entry of summary.packages.slice(0, 8)) {
      console.log(`  ${pad(`${(entry.share * 100).toFixed(1)}%`, 7, true)}  ${entry.name}`);
    }
    console.log("  by function (self time):");
    for (const spot of summary.functions) {
      console.log(
        `  ${pad(`${(spot.share * 100).toFixed(1)}%`, 7, true)}  ${pad(spot.name.slice(0, 36), 36)} ${spot.location}`,
      );
    }
  }
  return summaries;
}

/** Fraction (0–1) of all CPUs' time spent not idle over the next second, across every process on the machine. */
async function machineBusy(): Promise<number> {
  const totals = () =>
    os.cpus().reduce(
      (sum, cpu) => {
        const { idle, ...rest } = cpu.times;
        return { idle: sum.idle + idle, all: sum.all + idle + Object.values(rest).reduce((a, b) => a + b, 0) };
      },
      { idle: 0, all: 0 },
    );
  const before = totals();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const after = totals();
  const all = after.all - before.all;
  return all > 0 ? 1 - (after.idle - before.idle) / all : 0;
}

function pad(value: string, width: number, right = false): string {
  return right ? value.padStart(width) : value.padEnd(width);
}

function verdict(pass: boolean): string {
  return pass ? "PASS" : "FAIL";
}

async function main(): Promise<void> {
  const runStarted = performance.now();
  const build = await ensureBuild();
  if (build.stale) log("note: app/ or server/ changed after .next was built; pass --build to measure the current code");

  const dbName = `crm_bench_${Date.now()}_${randomBytes(3).toString("hex")}`;
  await adminQuery(`CREATE DATABASE "${dbName}"`);
  cleanups.push(async () => {
    await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    log(`dropped database ${dbName}`);
  });
  const databaseUrl = withDatabase(ADMIN_URL, dbName);
  log(`database ${dbName}${QUICK ? " (quick run)" : ""}`);
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = REDIS_URL;

  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  cleanups.push(() => client.end());
  const fixture = await prepareFixture(databaseUrl, client);
  const pgVersion = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v;

  // Last run's profiles would be mistaken for this run's.
  if (CPU_PROFILE) rmSync(PROFILES_DIR, { recursive: true, force: true });
  const servers = {
    bare: await launch("bare", databaseUrl),
    facade: await launch("facade", databaseUrl),
    next: await launch("next", databaseUrl),
  };
  if (CPU_PROFILE) log("--profile: servers run under the V8 profiler; compare ratios from a run without it");
  const busyBefore = await machineBusy();
  if (busyBefore > 0.25) {
    log(
      `note: the CPUs are ${(busyBefore * 100).toFixed(0)}% busy with the servers idle: other work is running, numbers will be noisy`,
    );
  }
  const get = await measureGet(servers, fixture);
  await servers.bare.stop();
  const variants = {
    noAudit: await launch("facade", databaseUrl, { BENCH_DISABLE_LAYERS: LAYER_ENV.noAudit }),
    off: await launch("facade", databaseUrl, { BENCH_DISABLE_LAYERS: LAYER_ENV.off }),
  };
  const platform = await measurePlatformLayers({
    origins: { all: servers.facade.origin, noAudit: variants.noAudit.origin, off: variants.off.origin },
    key: fixture.key,
    accountId: fixture.accountId,
    connections: PROFILE.connections,
    warmupMs: PROFILE.warmupMs / 2,
    durationMs: PROFILE.durationMs,
    slices: PROFILE.slices,
  });
  await Promise.all([servers.facade.stop(), variants.noAudit.stop(), variants.off.stop()]);
  const bulk = await measureBulk(servers.next, fixture, client);
  const pagination = await measurePagination(servers.next, fixture);
  await servers.next.stop();
  const busyAfter = await machineBusy();
  if (busyAfter > 0.25 && busyBefore <= 0.25) {
    log(
      `note: the CPUs were ${(busyAfter * 100).toFixed(0)}% busy after the run with the servers stopped: other work was running, numbers may be noisy`,
    );
  }
  const profiles = CPU_PROFILE ? printHotSpots() : undefined;

  const { bare, facade, next: stack } = get;
  const ratios = [
    {
      name: "throughput next/bare",
      value: stack.rps / bare.rps,
      target: `>= ${TARGETS.throughput}`,
      pass: stack.rps / bare.rps >= TARGETS.throughput,
    },
    { name: "bulk upsert next/raw", value: bulk.ratio, target: `<= ${TARGETS.bulk}`, pass: bulk.ratio <= TARGETS.bulk },
    {
      name: "pagination deep/first",
      value: pagination.ratio,
      target: `<= ${TARGETS.pagination}`,
      pass: pagination.ratio <= TARGETS.pagination,
    },
    ...(["getTogether", "postTogether"] as const).map((name) => ({
      name: `rate limit+audit ${name.startsWith("get") ? "GET" : "POST"}`,
      value: platform.costs[name],
      target: `<= ${TARGETS.platform}`,
      pass: platform.costs[name] <= TARGETS.platform,
    })),
  ];

  const lines: string[] = [];
  lines.push("");
  lines.push(
    `GET /api/v1/accounts/{id} — ${PROFILE.connections} connections, ${PROFILE.durationMs / 1000} s each in ${PROFILE.slices} alternating slices, after ${PROFILE.warmupMs / 1000} s warm-up`,
  );
  lines.push(
    `  ${pad("server", 22)}${pad("req/s", 9, true)}${pad("p50 ms", 9, true)}${pad("p99 ms", 9, true)}${pad("non-2xx", 9, true)}${pad("client CPU", 12, true)}  req/s per slice`,
  );
  for (const [label, result] of [
    ["bare node:http + pg", bare],
    ["facade on node:http", facade],
    ["next start (stack)", stack],
  ] as const) {
    lines.push(
      `  ${pad(label, 22)}${pad(result.rps.toFixed(0), 9, true)}${pad(result.p50.toFixed(2), 9, true)}${pad(result.p99.toFixed(2), 9, true)}${pad(String(result.non2xx + result.errors), 9, true)}${pad(`${(result.clientCores * 100).toFixed(0)}%`, 12, true)}  ${result.sliceRps.join(" ")}`,
    );
  }
  lines.push("");
  lines.push(`POST /api/v1/accounts/bulk, ${BULK_SIZE} items — median of ${PROFILE.bulkRuns} runs`);
  lines.push(`  ${pad("case", 22)}${pad("next ms", 9, true)}${pad("raw ms", 9, true)}${pad("ratio", 9, true)}`);
  for (const [label, entry] of [
    ["500 new (insert)", bulk.create],
    ["500 existing (update)", bulk.update],
  ] as const) {
    lines.push(
      `  ${pad(label, 22)}${pad(entry.stackMs.toFixed(1), 9, true)}${pad(entry.rawMs.toFixed(1), 9, true)}${pad(`${entry.ratio.toFixed(2)}x`, 9, true)}`,
    );
  }
  lines.push("");
  lines.push(
    `GET /api/v1/accounts?limit=${PAGE_LIMIT} over ${SEED_ROWS.toLocaleString("en")} accounts — median of ${PROFILE.pageRuns} requests`,
  );
  lines.push(`  ${pad("page", 22)}${pad("p50 ms", 9, true)}${pad("p90 ms", 9, true)}`);
  lines.push(
    `  ${pad("first", 22)}${pad(pagination.firstMs.toFixed(2), 9, true)}${pad(pagination.firstP90.toFixed(2), 9, true)}`,
  );
  lines.push(
    `  ${pad(`after row ${DEEP_ROW.toLocaleString("en")}`, 22)}${pad(pagination.deepMs.toFixed(2), 9, true)}${pad(pagination.deepP90.toFixed(2), 9, true)}`,
  );
  lines.push("");
  lines.push(
    `Platform layers on the facade (node:http), ${PROFILE.connections} connections, alternating slices — share of throughput each layer costs`,
  );
  lines.push(`  ${pad("case", 34)}${pad("req/s", 9, true)}${pad("p50 ms", 9, true)}${pad("p99 ms", 9, true)}`);
  for (const [label, result] of [
    ["GET, all layers", platform.get.all],
    ["GET, rate limit only", platform.get.noAudit],
    ["GET, neither", platform.get.off],
    ["POST, all layers", platform.post.all],
    ["POST, rate limit only", platform.post.noAudit],
    ["POST, neither", platform.post.off],
    ["POST, all + Idempotency-Key", platform.postIdempotent],
  ] as const) {
    lines.push(
      `  ${pad(label, 34)}${pad(result.rps.toFixed(0), 9, true)}${pad(result.p50.toFixed(2), 9, true)}${pad(result.p99.toFixed(2), 9, true)}${result.non2xx + result.errors > 0 ? `  ${result.non2xx + result.errors} failed` : ""}`,
    );
  }
  const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
  lines.push(
    `  cost GET: rate limit ${percent(platform.costs.getRateLimit)}, audit ${percent(platform.costs.getAudit)}, together ${percent(platform.costs.getTogether)}`,
  );
  lines.push(
    `  cost POST: rate limit ${percent(platform.costs.postRateLimit)}, audit ${percent(platform.costs.postAudit)}, together ${percent(platform.costs.postTogether)}; Idempotency-Key ${percent(platform.costs.postIdempotency)}`,
  );
  lines.push("");
  lines.push("Ratios");
  for (const ratio of ratios) {
    lines.push(
      `  ${pad(ratio.name, 24)}${pad(ratio.value.toFixed(2), 7, true)}   target ${pad(ratio.target, 7)} ${verdict(ratio.pass)}`,
    );
  }
  console.log(lines.join("\n"));

  const durationS = (performance.now() - runStarted) / 1000;
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
  const summary = (r: LoadResult) => ({
    ...r,
    rps: Math.round(r.rps),
    p50: +r.p50.toFixed(3),
    p99: +r.p99.toFixed(3),
    mean: +r.mean.toFixed(3),
  });
  const report = {
    generatedAt: new Date().toISOString(),
    quick: QUICK,
    cpuProfiled: CPU_PROFILE,
    durationS: +durationS.toFixed(1),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGb: +(os.totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
      postgres: pgVersion,
      // Share of all CPUs busy over one second with our servers idle; well above 0 means a shared, noisy machine.
      busyBefore: +busyBefore.toFixed(2),
      busyAfter: +busyAfter.toFixed(2),
      loadAverage1m: +(os.loadavg()[0] ?? 0).toFixed(2),
    },
    commit,
    nextBuildId: build.buildId,
    nextBuildStale: build.stale,
    profile: PROFILE,
    get: { bare: summary(bare), facade: summary(facade), next: summary(stack) },
    bulk,
    pagination: { ...pagination, seededRows: SEED_ROWS, deepRow: DEEP_ROW, limit: PAGE_LIMIT },
    platform,
    ratios,
    ...(profiles ? { profiles } : {}),
  };
  const resultsDir = path.join(ROOT, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, "latest.json"), `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote bench/results/latest.json (run took ${durationS.toFixed(0)} s)`);
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  console.error(`[bench] crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  exitCode = 1;
} finally {
  await cleanupAll();
}
// Prisma's and ioredis's handles may linger after close; the report is written, so leave now.
process.exit(exitCode);
