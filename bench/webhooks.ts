// Webhook replays in the benchmark (docs/architecture.md, "Webhooks and the outbox"): a replay of 100 failed
// deliveries run as the worker runs it (the replay function's handler, its steps executed in this process) to a local
// receiver, against the 10-a-second cap per endpoint: how long it takes, the most replay requests the receiver got in
// any one second, and, meanwhile, how the endpoint's normal deliveries fare (one every 250 ms, made as the deliver
// function makes them) against the same deliveries with no replay running. Called by bench/run.ts once DATABASE_URL
// points at the scratch database; it seeds with plain SQL and runs the services in this process.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { median, quantile } from "./load";

/** Failed deliveries the replay sends. */
export const REPLAY_DELIVERIES = 100;
/** Normal deliveries made while it runs (and again alone), one every {@link NORMAL_EVERY_MS}. */
const NORMAL_DELIVERIES = 30;
const NORMAL_EVERY_MS = 250;
/** What the receiver takes to answer each request (ms), like a receiver doing a little work. */
const RECEIVER_MS = 20;

/** What {@link measureReplay} reports; times in ms unless named otherwise. */
export interface ReplayResult {
  deliveries: number;
  /** From the replay's start to its last delivery recorded, seconds. */
  seconds: number;
  /** Replay requests the receiver got per second, over the whole replay. */
  perSecond: number;
  /** The most replay requests the receiver got within any 1,000 ms. */
  maxInAnySecond: number;
  /** Normal deliveries made while the replay ran, and how many of them finished before it ended. */
  normal: { made: number; doneDuringReplay: number; p50: number; p95: number };
  /** The same normal deliveries with no replay running. */
  normalAlone: { p50: number; p95: number };
}

/**
 * Seeds an endpoint with {@link REPLAY_DELIVERIES} failed deliveries and {@link NORMAL_DELIVERIES} × 2 pending ones,
 * then measures the normal deliveries alone, and the replay with the other normal deliveries made beside it.
 */
export async function measureReplay(
  client: pg.Client,
  options: { log: (line: string) => void },
): Promise<ReplayResult> {
  process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";
  const { resetEnvCache } = await import("../server/env");
  resetEnvCache();
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createWebhookEndpoint } = await import("../server/webhooks/endpoints");
  const { attemptDelivery } = await import("../server/webhooks/deliveries");
  const { startReplay } = await import("../server/webhooks/replays");
  const { replayWebhooks } = await import("../inngest/functions/replay-webhooks");

  const received: Array<{ eventId: string; at: number }> = [];
  const receiver = createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on("end", () => {
      received.push({ eventId: String(req.headers["service-event-id"]), at });
      setTimeout(() => res.writeHead(200).end("ok"), RECEIVER_MS);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const tag = randomBytes(4).toString("hex");
    const org = await ensureOrganisation(`bench-replay-${tag}`, { name: "Bench replay" });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const { endpoint } = await createWebhookEndpoint(org.id, { url, events: ["*"] });
    const total = REPLAY_DELIVERIES + 2 * NORMAL_DELIVERIES;
    await client.query(
      `INSERT INTO "Event" ("id", "orgId", "sequence", "name", "resource", "resourceId", "data", "actor", "createdAt", "fannedOutAt")
       SELECT 'evt_replay_${tag}_' || i, $1, i, 'account.updated', 'account', 'acc_' || i,
              jsonb_build_object('id', 'acc_' || i, 'name', 'Account ' || i), '{"type":"system"}',
              now() AT TIME ZONE 'UTC' - interval '10 minutes', now() AT TIME ZONE 'UTC' - interval '9 minutes'
       FROM generate_series(1, $2::int) AS i`,
      [org.id, total],
    );
    await client.query(`INSERT INTO "EventCounter" ("orgId", "lastSequence") VALUES ($1, $2)`, [org.id, total]);
    // The first deliveries failed all their attempts; the rest wait for their first (the normal traffic).
    await client.query(
      `INSERT INTO "WebhookDelivery" ("id", "orgId", "endpointId", "eventId", "status", "attemptCount", "createdAt", "updatedAt")
       SELECT 'whd_replay_${tag}_' || i, $1, $2, 'evt_replay_${tag}_' || i,
              (CASE WHEN i <= $3 THEN 'FAILED' ELSE 'PENDING' END)::"DeliveryStatus", CASE WHEN i <= $3 THEN 5 ELSE 0 END,
              now() AT TIME ZONE 'UTC' - interval '9 minutes', now() AT TIME ZONE 'UTC'
       FROM generate_series(1, $4::int) AS i`,
      [org.id, endpoint.id, REPLAY_DELIVERIES, total],
    );
    await client.query(`ANALYZE "Event", "WebhookDelivery"`);
    const normalIds = (from: number) =>
      Array.from({ length: NORMAL_DELIVERIES }, (_, i) => `whd_replay_${tag}_${REPLAY_DELIVERIES + from + i + 1}`);

    // The normal deliveries, one every 250 ms, each timed from its start to its recorded attempt.
    const deliverNormally = async (ids: string[], until?: () => boolean) => {
      const latencies: Array<{ ms: number; end: number }> = [];
      await Promise.all(
        ids.map(async (id, index) => {
          await new Promise((resolve) => setTimeout(resolve, index * NORMAL_EVERY_MS));
          if (until?.()) return;
          const started = performance.now();
          await attemptDelivery(id, { mode: "scheduled", final: false });
          latencies.push({ ms: performance.now() - started, end: performance.now() });
        }),
      );
      return latencies;
    };
    const alone = await deliverNormally(normalIds(0));
    options.log(
      `webhook replay: ${alone.length} normal deliveries alone, p50 ${median(alone.map((l) => l.ms)).toFixed(1)} ms`,
    );

    const replay = await startReplay(
      org.id,
      endpoint.id,
      { since: new Date(Date.now() - 3_600_000).toISOString() },
      { actor: { type: "system" }, audit: { userId: null, email: "bench", ip: null, userAgent: null }, isTest: false },
    );
    if (replay.matched !== REPLAY_DELIVERIES) throw new Error(`the replay matched ${replay.matched} deliveries`);
    const replayEvents = new Set(Array.from({ length: REPLAY_DELIVERIES }, (_, i) => `evt_replay_${tag}_${i + 1}`));
    const started = performance.now();
    let ended = Number.POSITIVE_INFINITY;
    const [outcome, beside] = await Promise.all([
      replayWebhooks({ event: { data: { replayId: replay.id } }, step: { run: (_id, fn) => fn() } }).then((result) => {
        ended = performance.now();
        return result;
      }),
      deliverNormally(normalIds(NORMAL_DELIVERIES)),
    ]);
    if (outcome.sent !== REPLAY_DELIVERIES || outcome.status !== "completed")
      throw new Error(`the replay ended ${outcome.status} after ${outcome.sent} deliveries`);
    const times = received.filter((request) => replayEvents.has(request.eventId)).map((request) => request.at);
    let maxInAnySecond = 0;
    for (const [index, at] of times.entries()) {
      maxInAnySecond = Math.max(maxInAnySecond, times.slice(index).filter((other) => other - at < 1_000).length);
    }
    const seconds = (ended - started) / 1000;
    const result: ReplayResult = {
      deliveries: times.length,
      seconds,
      perSecond: times.length / seconds,
      maxInAnySecond,
      normal: {
        made: beside.length,
        doneDuringReplay: beside.filter((latency) => latency.end <= ended).length,
        p50: median(beside.map((latency) => latency.ms)),
        p95: quantile(
          beside.map((latency) => latency.ms),
          0.95,
        ),
      },
      normalAlone: {
        p50: median(alone.map((latency) => latency.ms)),
        p95: quantile(
          alone.map((latency) => latency.ms),
          0.95,
        ),
      },
    };
    options.log(
      `webhook replay: ${result.deliveries} deliveries in ${seconds.toFixed(2)} s (${result.perSecond.toFixed(1)}/s, at most ${maxInAnySecond} in any second); ${result.normal.doneDuringReplay} of ${result.normal.made} normal deliveries done meanwhile`,
    );
    return result;
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
