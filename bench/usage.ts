// The usage view's speed (docs/architecture.md, "Usage: the roll-up, the chart and the export"): the usage page and
// GET /api/v1/usage over 30 days for an organisation with 1,000,000 logged requests against one with 1,000 (target
// ≤ 2×), and the peak RSS of a fresh `npm start` while it streams the CSV of the 1,000,000 rows (target ≤ idle + 100 MB).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { median, send } from "./load";
import type { ChildServer } from "./servers";
import { signedInOwner } from "./settings-pages";

/** Requests in the large and the small organisation, spread evenly over the last 30 days. */
export const USAGE_LARGE = 1_000_000;
export const USAGE_SMALL = 1_000;

/** Result of {@link measureUsage}. */
export interface UsageResult {
  seedMs: number;
  rollUpMs: number;
  rollUpSlots: number;
  api: { largeMs: number; smallMs: number; ratio: number };
  page: { largeMs: number; smallMs: number; ratio: number };
}

/** Result of {@link measureUsageCsv}. */
export interface UsageCsvResult {
  rows: number;
  bytes: number;
  seconds: number;
  idleMb: number | null;
  peakMb: number | null;
  growthMb: number | null;
}

interface UsageOrg {
  id: string;
  key: string;
  cookie: string;
  requests: number;
}

/** The organisations, keys and settings sessions of the usage measures. */
export interface UsageFixture {
  large: UsageOrg;
  small: UsageOrg;
}

/** A process's memory figure from /proc (`VmRSS` now, `VmHWM` its peak), MB; null when unreadable. */
export function procMemoryMb(pid: number | undefined, field: "VmRSS" | "VmHWM"): number | null {
  if (pid === undefined) return null;
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Two organisations, each with an admin:read key and a signed-in owner (the cookie better-auth sets for `origin`),
 * and their audit rows: `requests` calls spread evenly over the last 30 days with a realistic mix (two keys, four
 * methods, 2xx/3xx/4xx/5xx with error codes, latencies from 2 to 900 ms), inserted with SQL (the roll-up's trigger
 * marks their slots), then rolled up through the service as the Inngest function would.
 */
export async function prepareUsage(
  client: pg.Client,
  origin: string,
  log: (line: string) => void,
): Promise<UsageFixture & { seedMs: number; rollUpMs: number; rollUpSlots: number }> {
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createApiKey } = await import("../server/platform/api-keys/service");
  const { rollUpUsage } = await import("../server/platform/request-log/usage-rollup");
  const tag = randomBytes(4).toString("hex");
  const orgs = {} as UsageFixture;
  let seedMs = 0;
  for (const [size, requests] of [
    ["large", USAGE_LARGE],
    ["small", USAGE_SMALL],
  ] as const) {
    const org = await ensureOrganisation(`bench-usage-${size}-${tag}`, { name: `Bench usage ${size}` });
    const key = await createApiKey(org.id, { name: "bench", scopes: ["admin:read"], isTest: false });
    const cookie = await signedInOwner(origin, org.id, `usage-${size}`);
    const started = performance.now();
    await client.query(
      `INSERT INTO "AuditLog" ("orgId", "apiKeyId", "requestId", "method", "path", "status", "errorCode", "durationMs", "createdAt")
       SELECT $1, CASE WHEN i % 3 = 0 THEN 'key_b' ELSE 'key_a' END, 'req_' || md5(i::text),
              (ARRAY['GET','GET','GET','POST','PATCH','DELETE'])[1 + i % 6],
              '/api/v1/accounts/' || (i % 5000),
              (ARRAY[200,200,200,201,200,204,304,404,422,429,500,200])[1 + i % 12],
              (ARRAY[NULL,NULL,NULL,NULL,NULL,NULL,NULL,'not_found','validation_error','rate_limited','internal_error',NULL])[1 + i % 12],
              2 + (i::bigint * 7919) % 120 + CASE WHEN i % 97 = 0 THEN 800 ELSE 0 END,
              (now() AT TIME ZONE 'UTC') - INTERVAL '30 days' + (i::float8 / $2) * INTERVAL '30 days'
       FROM generate_series(1, $2::int) AS i`,
      [org.id, requests],
    );
    seedMs += performance.now() - started;
    orgs[size] = { id: org.id, key: key.raw, cookie, requests };
  }
  await client.query(`VACUUM ANALYZE "AuditLog"`);
  log(
    `usage: seeded ${USAGE_LARGE.toLocaleString("en")} + ${USAGE_SMALL.toLocaleString("en")} audit rows in ${(seedMs / 1000).toFixed(1)} s`,
  );
  const started = performance.now();
  const { slots } = await rollUpUsage();
  const rollUpMs = performance.now() - started;
  await client.query(`VACUUM ANALYZE "UsageRollup"`);
  log(`usage: rolled up ${slots.toLocaleString("en")} slots in ${(rollUpMs / 1000).toFixed(1)} s`);
  return { ...orgs, seedMs, rollUpMs, rollUpSlots: slots };
}

/**
 * Times `GET /api/v1/usage` (30 days, 12-hour buckets) and the usage page (`range=30d`) for the large and the small
 * organisation, alternating, sequentially on one connection; medians after a warm-up.
 */
export async function measureUsage(
  server: ChildServer,
  fixture: UsageFixture,
  options: { runs: number; warmup: number; log: (line: string) => void },
): Promise<Pick<UsageResult, "api" | "page">> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const to = new Date();
  const from = new Date(to.getTime() - 30 * 24 * 60 * 60 * 1000);
  const timeApi = async (org: UsageOrg) => {
    const response = await send(
      agent,
      `${server.origin}/api/v1/usage?from=${from.toISOString()}&to=${to.toISOString()}`,
      { headers: { authorization: `Bearer ${org.key}` } },
    );
    const data = response.status === 200 ? JSON.parse(response.body).data : undefined;
    if (data?.totals.requests < org.requests)
      throw new Error(`GET /usage answered ${response.status}: ${response.body.slice(0, 300)}`);
    return response.ms;
  };
  const timePage = async (org: UsageOrg) => {
    const response = await send(agent, `${server.origin}/settings/usage?range=30d`, {
      headers: { cookie: org.cookie },
    });
    if (response.status !== 200 || !response.body.includes('data-testid="usage-chart"'))
      throw new Error(`the usage page answered ${response.status}: ${response.body.slice(0, 300)}`);
    return response.ms;
  };
  const samples = {
    apiLarge: [] as number[],
    apiSmall: [] as number[],
    pageLarge: [] as number[],
    pageSmall: [] as number[],
  };
  for (let round = 1; round <= options.warmup + options.runs; round++) {
    const a = await timeApi(fixture.large);
    const b = await timeApi(fixture.small);
    const c = await timePage(fixture.large);
    const d = await timePage(fixture.small);
    if (round <= options.warmup) continue;
    samples.apiLarge.push(a);
    samples.apiSmall.push(b);
    samples.pageLarge.push(c);
    samples.pageSmall.push(d);
  }
  agent.destroy();
  const pair = (large: number[], small: number[]) => ({
    largeMs: median(large),
    smallMs: median(small),
    ratio: median(large) / median(small),
  });
  const result = { api: pair(samples.apiLarge, samples.apiSmall), page: pair(samples.pageLarge, samples.pageSmall) };
  options.log(
    `usage: GET /usage 30 d ${result.api.largeMs.toFixed(2)} ms (1M) vs ${result.api.smallMs.toFixed(2)} ms (1k), ${result.api.ratio.toFixed(2)}x; page ${result.page.largeMs.toFixed(1)} vs ${result.page.smallMs.toFixed(1)} ms, ${result.page.ratio.toFixed(2)}x`,
  );
  return result;
}

/**
 * Streams the CSV of the large organisation's 30 days (every row) from a fresh server, reading it as fast as it comes,
 * and samples the server's RSS every 100 ms: idle (after one page load) against the peak while streaming.
 */
export async function measureUsageCsv(
  server: ChildServer,
  org: UsageOrg,
  log: (line: string) => void,
): Promise<UsageCsvResult> {
  const warm = new Agent({ keepAlive: false });
  await send(warm, `${server.origin}/settings/usage?range=30d`, { headers: { cookie: org.cookie } });
  warm.destroy();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const idleMb = procMemoryMb(server.pid, "VmRSS");
  let peakMb = idleMb;
  const sampler = setInterval(() => {
    const now = procMemoryMb(server.pid, "VmRSS");
    if (now !== null && (peakMb === null || now > peakMb)) peakMb = now;
  }, 100);
  const to = new Date();
  const from = new Date(to.getTime() - 31 * 24 * 60 * 60 * 1000);
  const started = performance.now();
  const { bytes, lines } = await new Promise<{ bytes: number; lines: number }>((resolve, reject) => {
    const url = new URL(`${server.origin}/settings/usage/export?from=${from.toISOString()}&to=${to.toISOString()}`);
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { cookie: org.cookie } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`the export answered ${res.statusCode}`));
        let total = 0;
        let newlines = 0;
        res.on("data", (chunk: Buffer) => {
          total += chunk.length;
          for (const byte of chunk) if (byte === 10) newlines++;
        });
        res.on("end", () => resolve({ bytes: total, lines: newlines }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  const result = {
    rows: lines - 1,
    bytes,
    seconds,
    idleMb,
    peakMb,
    growthMb: idleMb !== null && peakMb !== null ? peakMb - idleMb : null,
  };
  log(
    `usage: CSV of ${result.rows.toLocaleString("en")} rows (${(bytes / 2 ** 20).toFixed(0)} MB) in ${seconds.toFixed(1)} s; RSS idle ${idleMb?.toFixed(0)} MB, peak ${peakMb?.toFixed(0)} MB (+${result.growthMb?.toFixed(0)} MB)`,
  );
  return result;
}
