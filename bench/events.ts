// The events feed in the benchmark (issue #13): a page of 100 events after 1,000,000 events against the first page,
// and what recording events costs on the write path (one create, a bulk upsert of 500). Called by bench/run.ts once
// DATABASE_URL points at the scratch database; it seeds with plain SQL and measures through the services in this
// process, so the figures are the database work of the feed and of the outbox insert, without HTTP around them.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { median } from "./load";

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
  /** One `POST /accounts` worth of work (`createAccount`) and the `recordEvents` share of it. */
  createMs: number;
  recordOneMs: number;
  /** A bulk upsert of 500 new accounts and the `recordEvents` of its 500 events. */
  bulkMs: number;
  recordBulkMs: number;
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

async function timedValue(runs: number, warmup: number, work: () => Promise<number>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const spent = await work();
    if (i >= warmup) samples.push(spent);
  }
  return median(samples);
}

/**
 * Seeds {@link FEED_EVENTS} events in a new organisation (one transaction per 100,000, so they have distinct txids
 * like real traffic), then times the first page of `listEvents` and the page after event 999,900 (its cursor built
 * from that event's position), and the write-path cost of recording events.
 */
export async function measureEventsFeed(
  client: pg.Client,
  options: { runs: number; warmup: number; log: (line: string) => void },
): Promise<EventsFeedResult> {
  const { ensureOrganisation } = await import("../server/services/organisations");
  const { listEvents } = await import("../server/services/event-feed");
  const { createAccount, bulkUpsertAccounts } = await import("../server/services/accounts");
  const { recordEvents } = await import("../server/services/events");
  const { transaction } = await import("../server/db/transaction");
  const tag = randomBytes(4).toString("hex");
  const org = await ensureOrganisation(`bench-feed-${tag}`, { name: "Bench feed" });

  const seedStarted = performance.now();
  const batch = 100_000;
  for (let start = 0; start < FEED_EVENTS; start += batch) {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO "Event" ("id", "orgId", "name", "resource", "resourceId", "data", "actor", "isTest", "createdAt", "fannedOutAt")
       SELECT 'evt_bench_' || i, $1, 'account.updated', 'account', 'acc_' || (i % 5000),
              jsonb_build_object('id', 'acc_' || (i % 5000), 'name', 'Account ' || i), '{"type":"system"}', false,
              now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC'
       FROM generate_series($2::int, $3::int) AS i`,
      [org.id, start + 1, Math.min(start + batch, FEED_EVENTS)],
    );
    await client.query("COMMIT");
  }
  await client.query(`VACUUM ANALYZE "Event"`);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  options.log(`events feed: seeded ${FEED_EVENTS.toLocaleString("en")} events in ${seedSeconds.toFixed(1)} s`);

  // Output names differ from the columns: ORDER BY would otherwise sort by the text casts.
  const deep = await client.query<{ tx: string; sq: string; at: string }>(
    `SELECT "txid"::text AS "tx", "seq"::text AS "sq", extract(epoch FROM "createdAt")::bigint::text AS "at"
     FROM "Event" WHERE "orgId" = $1 ORDER BY "txid" DESC, "seq" DESC OFFSET $2 LIMIT 1`,
    [org.id, PAGE],
  );
  const position = deep.rows[0];
  if (!position) throw new Error("the feed seed produced fewer events than expected");
  const cursor = Buffer.from(`v1.${position.tx}.${position.sq}.${position.at}`).toString("base64url");
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
  // Timed inside the transaction: the statement a write adds, not the transaction every write has anyway.
  const inside = (events: () => Parameters<typeof recordEvents>[3]) => async () => {
    let spent = 0;
    await transaction(async (tx) => {
      const started = performance.now();
      await recordEvents(tx, org.id, origin, events());
      spent = performance.now() - started;
    });
    return spent;
  };
  const recordOneMs = await timedValue(
    options.runs,
    options.warmup,
    inside(() => [{ name: "account.created", data: { id: `acc_x${n++}`, name: "x" } }]),
  );
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
  const recordBulkMs = await timedValue(
    Math.max(5, options.runs / 4),
    2,
    inside(() => events500(n++)),
  );
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
