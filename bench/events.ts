// The events feed in the benchmark: a page of 100 events after 1,000,000 events against the first page, what recording
// events costs on the write path (one create, a bulk upsert of 500), and write latency and throughput with 8
// concurrent writers in one organisation (they share its feed counter, so their commits take turns) against 8
// writers in 8 organisations. Called by bench/run.ts once DATABASE_URL points at the scratch database; it seeds with
// plain SQL and measures through the services in this process, so the figures are the database work of the feed and
// of the outbox, without HTTP around them.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { median, quantile } from "./load";

/** Events seeded in the feed organisation. */
export const FEED_EVENTS = 1_000_000;
const PAGE = 100;

/** What {@link measureEventsFeed} reports; times in ms (medians). */
export interface EventsFeedResult {
  events: number;
  seedSeconds: number;
  firstPageMs: number;
  deepPageMs: number;
  /** deepPageMs / firstPageMs; target ≤ 1.5. */
  ratio: number;
  /** One `POST /accounts` worth of work (`createAccount`), and what recording one event adds to a transaction. */
  createMs: number;
  recordOneMs: number;
  /** A bulk upsert of 500 new accounts, and what recording 500 events adds to a transaction. */
  bulkMs: number;
  recordBulkMs: number;
}

/** One layout of {@link measureConcurrentWrites}: every write of every writer, merged over the slices. */
export interface WriteLoadResult {
  writes: number;
  writesPerSecond: number;
  /** Latency of one write (a transaction updating one account and recording its event), ms. */
  p50: number;
  p95: number;
  /** Writes/s of each slice: a wide spread means the machine was busy with something else meanwhile. */
  sliceRates: number[];
}

/** What {@link measureConcurrentWrites} reports. */
export interface ConcurrentWritesResult {
  writers: number;
  sliceMs: number;
  slices: number;
  /** Every writer in the same organisation: their events take numbers from one counter row. */
  oneOrganisation: WriteLoadResult;
  /** Writer i in organisation i: no two share a counter. */
  eightOrganisations: WriteLoadResult;
}

/**
 * Median ms of each piece of work, run in turn within every iteration, so a burst of other load on the machine (the
 * servers' background work, autovacuum) falls on all of them instead of skewing one ratio.
 */
async function timedAlternating(
  runs: number,
  warmup: number,
  works: ReadonlyArray<() => Promise<unknown>>,
): Promise<number[]> {
  const samples = works.map((): number[] => []);
  for (let i = 0; i < warmup + runs; i++) {
    for (const [index, work] of works.entries()) {
      const started = performance.now();
      await work();
      if (i >= warmup) samples[index]?.push(performance.now() - started);
    }
  }
  return samples.map(median);
}

/** Median ms of one piece of work after `warmup` unmeasured runs. */
async function timed(runs: number, warmup: number, work: () => Promise<unknown>): Promise<number> {
  const [ms = Number.NaN] = await timedAlternating(runs, warmup, [work]);
  return ms;
}

/**
 * Seeds {@link FEED_EVENTS} events in a new organisation (numbered 1 to 1,000,000 as their commits would number them), then times
 * the first page of `listEvents` and the page after event 999,900 (its cursor built from that event's position), and
 * the write-path cost of recording events: a transaction recording them against the same empty transaction, since
 * they are written (and numbered) as the transaction commits.
 */
export async function measureEventsFeed(
  client: pg.Client,
  options: { runs: number; warmup: number; log: (line: string) => void },
): Promise<EventsFeedResult> {
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { listEvents } = await import("../server/platform/events-feed/service");
  const { CURSOR_KINDS, sealCursor } = await import("../server/records/pagination");
  const { createAccount, bulkUpsertAccounts } = await import("../server/records/accounts/service");
  const { recordEvents } = await import("../server/records/events");
  const { transaction } = await import("../server/db/transaction");
  const tag = randomBytes(4).toString("hex");
  const org = await ensureOrganisation(`bench-feed-${tag}`, { name: "Bench feed" });

  const seedStarted = performance.now();
  const batch = 100_000;
  for (let start = 0; start < FEED_EVENTS; start += batch) {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO "Event" ("id", "orgId", "sequence", "name", "resource", "resourceId", "data", "actor", "isTest", "createdAt", "fannedOutAt")
       SELECT 'evt_bench_' || i, $1, i, 'account.updated', 'account', 'acc_' || (i % 5000),
              jsonb_build_object('id', 'acc_' || (i % 5000), 'name', 'Account ' || i), '{"type":"system"}', false,
              now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
       FROM generate_series($2::int, $3::int) AS i`,
      [org.id, start + 1, Math.min(start + batch, FEED_EVENTS)],
    );
    await client.query("COMMIT");
  }
  await client.query(`INSERT INTO "EventCounter" ("orgId", "lastSequence") VALUES ($1, $2)`, [org.id, FEED_EVENTS]);
  await client.query(`VACUUM ANALYZE "Event"`);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  options.log(`events feed: seeded ${FEED_EVENTS.toLocaleString("en")} events in ${seedSeconds.toFixed(1)} s`);

  const deep = await client.query<{ sq: string; at: string }>(
    `SELECT "sequence"::text AS "sq", extract(epoch FROM "createdAt")::bigint::text AS "at"
     FROM "Event" WHERE "orgId" = $1 ORDER BY "sequence" DESC OFFSET $2 LIMIT 1`,
    [org.id, PAGE],
  );
  const position = deep.rows[0];
  if (!position) throw new Error("the feed seed produced fewer events than expected");
  // The feed's cursor as the service signs it (server/platform/events-feed/service.ts): 8 bytes of sequence, 4 of Unix seconds.
  const payload = Buffer.alloc(12);
  payload.writeBigUInt64BE(BigInt(position.sq));
  payload.writeUInt32BE(Number(position.at), 8);
  const cursor = sealCursor(CURSOR_KINDS.feed, payload, org.id);
  const deepPage = await listEvents(org.id, { limit: PAGE, cursor });
  if (deepPage.data.length !== PAGE || deepPage.hasMore) {
    throw new Error(
      `the deep page has ${deepPage.data.length} events (hasMore ${deepPage.hasMore}) after ${JSON.stringify(position)}: ${deepPage.data[0]?.id}`,
    );
  }
  const [firstPageMs = Number.NaN, deepPageMs = Number.NaN] = await timedAlternating(options.runs, options.warmup, [
    () => listEvents(org.id, { limit: PAGE }),
    () => listEvents(org.id, { limit: PAGE, cursor }),
  ]);
  options.log(`events feed: first page ${firstPageMs.toFixed(2)} ms, after 999,900 ${deepPageMs.toFixed(2)} ms`);

  const origin = { isTest: false, deliver: false };
  let n = 0;
  const createMs = await timed(options.runs, options.warmup, () =>
    createAccount(org.id, { name: `Write path ${n++}` }, origin),
  );
  // A transaction recording the events against the same empty one, in turn: what recording adds, the numbering
  // at commit included.
  const empty = () => transaction(async () => {});
  const recording = (events: () => Parameters<typeof recordEvents>[3]) => () =>
    transaction(async (tx) => {
      await recordEvents(tx, org.id, origin, events());
    });
  const [withOneMs = Number.NaN, emptyMs = Number.NaN] = await timedAlternating(options.runs, options.warmup, [
    recording(() => [{ name: "account.created", data: { id: `acc_x${n++}`, name: "x" } }]),
    empty,
  ]);
  const recordOneMs = withOneMs - emptyMs;
  const bulkMs = await timed(Math.max(5, options.runs / 4), 2, () =>
    bulkUpsertAccounts(
      org.id,
      Array.from({ length: 500 }, (_, i) => ({ name: `Bulk ${n}-${i}`, externalId: `bulk-${n}-${i}` })),
      origin,
    ).finally(() => {
      n++;
    }),
  );
  const events500 = (k: number) =>
    Array.from({ length: 500 }, (_, i) => ({
      name: "account.created" as const,
      data: { id: `acc_b${k}_${i}`, name: `Bulk ${i}`, employeeCount: i },
    }));
  const [withBulkMs = Number.NaN, emptyAgainMs = Number.NaN] = await timedAlternating(
    Math.max(5, options.runs / 4),
    2,
    [recording(() => events500(n++)), empty],
  );
  const recordBulkMs = withBulkMs - emptyAgainMs;
  options.log(
    `events on the write path: create ${createMs.toFixed(2)} ms of which events ${recordOneMs.toFixed(2)} ms; bulk 500 ${bulkMs.toFixed(1)} ms of which events ${recordBulkMs.toFixed(1)} ms`,
  );
  return {
    events: FEED_EVENTS,
    seedSeconds,
    firstPageMs,
    deepPageMs,
    ratio: deepPageMs / firstPageMs,
    createMs,
    recordOneMs,
    bulkMs,
    recordBulkMs,
  };
}

/**
 * Write latency and throughput with `writers` concurrent writers (default 8), each updating its own account in a loop
 * (`updateAccount`: lock, update, one `account.updated` event), in two layouts: all in one organisation, where every
 * commit takes the organisation's feed counter in turn, and one organisation each. The layouts run in alternating
 * slices of `sliceMs` (after `warmupMs` of each, unmeasured), so a burst of other load falls on both. Works with the
 * services of any version that has `updateAccount`, so the same code measures the code before the counter existed.
 */
export async function measureConcurrentWrites(options: {
  writers?: number;
  sliceMs: number;
  slices: number;
  warmupMs: number;
  log: (line: string) => void;
}): Promise<ConcurrentWritesResult> {
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createAccount, updateAccount } = await import("../server/records/accounts/service");
  const writers = options.writers ?? 8;
  const origin = { isTest: false, deliver: false };
  const tag = randomBytes(4).toString("hex");
  const orgs = await Promise.all(
    Array.from({ length: writers }, (_, i) =>
      ensureOrganisation(`bench-writers-${tag}-${i}`, { name: `Writers ${i}` }),
    ),
  );
  const accountsOf = async (orgId: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => createAccount(orgId, { name: `Writer ${i}` }, origin)));
  const shared = await accountsOf(orgs[0]?.id as string, writers);
  const own = await Promise.all(orgs.map(async (org) => (await accountsOf(org.id, 1))[0]));
  const layouts = {
    oneOrganisation: shared.map((account) => ({ orgId: orgs[0]?.id as string, id: account.id })),
    eightOrganisations: own.map((account, i) => ({ orgId: orgs[i]?.id as string, id: account?.id as string })),
  };
  let counter = 0;
  const run = async (targets: ReadonlyArray<{ orgId: string; id: string }>, ms: number) => {
    const latencies: number[] = [];
    const until = performance.now() + ms;
    const started = performance.now();
    await Promise.all(
      targets.map(async (target) => {
        while (performance.now() < until) {
          const begun = performance.now();
          await updateAccount(target.orgId, { id: target.id, employeeCount: ++counter % 1_000_000 }, origin);
          latencies.push(performance.now() - begun);
        }
      }),
    );
    return { latencies, ms: performance.now() - started };
  };
  for (const targets of Object.values(layouts)) await run(targets, options.warmupMs);
  const samples = { oneOrganisation: [] as number[], eightOrganisations: [] as number[] };
  const spent = { oneOrganisation: 0, eightOrganisations: 0 };
  const rates = { oneOrganisation: [] as number[], eightOrganisations: [] as number[] };
  for (let slice = 0; slice < options.slices; slice++) {
    const order =
      slice % 2 === 0
        ? (["oneOrganisation", "eightOrganisations"] as const)
        : (["eightOrganisations", "oneOrganisation"] as const);
    for (const layout of order) {
      const { latencies, ms } = await run(layouts[layout], options.sliceMs);
      samples[layout].push(...latencies);
      spent[layout] += ms;
      rates[layout].push(Math.round((latencies.length / ms) * 1000));
    }
  }
  const result = (layout: keyof typeof layouts): WriteLoadResult => ({
    writes: samples[layout].length,
    writesPerSecond: (samples[layout].length / spent[layout]) * 1000,
    p50: quantile(samples[layout], 0.5),
    p95: quantile(samples[layout], 0.95),
    sliceRates: rates[layout],
  });
  const outcome = {
    writers,
    sliceMs: options.sliceMs,
    slices: options.slices,
    oneOrganisation: result("oneOrganisation"),
    eightOrganisations: result("eightOrganisations"),
  };
  options.log(
    `concurrent writes (${writers} writers): one organisation ${outcome.oneOrganisation.writesPerSecond.toFixed(0)}/s p50 ${outcome.oneOrganisation.p50.toFixed(2)} ms p95 ${outcome.oneOrganisation.p95.toFixed(2)} ms; ${writers} organisations ${outcome.eightOrganisations.writesPerSecond.toFixed(0)}/s p50 ${outcome.eightOrganisations.p50.toFixed(2)} ms p95 ${outcome.eightOrganisations.p95.toFixed(2)} ms`,
  );
  return outcome;
}
