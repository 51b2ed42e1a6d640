import { log } from "../../server/observability/logger";
import { checkWebhookAlerts } from "../../server/webhooks/alerts";
import { claimStuckDeliveries, claimUndispatchedEvents } from "../../server/webhooks/deliveries";
import { claimStalledReplays } from "../../server/webhooks/replays";
import { recordWorkerHeartbeat } from "../../server/webhooks/worker";
import { deliveryRequested, eventRecorded, inngest, replayRequested } from "../client";

/** Events claimed per step; a run hands over at most {@link SWEEP_BATCH} × {@link SWEEP_MAX_BATCHES} (20,000). */
export const SWEEP_BATCH = 1_000;
/** Batches per run (each minute). */
export const SWEEP_MAX_BATCHES = 20;

/**
 * Sweeper (docs/architecture.md, "Webhooks and the outbox": nothing is lost while Inngest is unreachable), every
 * minute: stamps the worker heartbeat (so start-up output and the settings area can say a worker is connected), hands
 * over again every live outbox event not fanned out a minute after it was recorded — a backlog of 10,000 in one run,
 * 1,000 per step — requests again deliveries left PENDING by a lost run (not started 30 min after creation, or idle
 * for 3 h) and replays no run has moved for 2 minutes, and opens, resolves and mails the organisations' webhook alerts
 * (`checkWebhookAlerts`).
 */
export const sweepOutboxFunction = inngest.createFunction(
  { id: "webhook-sweep-outbox", name: "Webhooks: resend what was not handed over", triggers: [{ cron: "* * * * *" }] },
  async ({ step }) => {
    const { reconnected } = await step.run("heartbeat", () => recordWorkerHeartbeat());
    let events = 0;
    for (let batch = 0; batch < SWEEP_MAX_BATCHES; batch++) {
      const claimed = await step.run(`claim-undispatched-events-${batch}`, () =>
        claimUndispatchedEvents({ limit: SWEEP_BATCH }),
      );
      if (claimed.length > 0) {
        await step.sendEvent(
          `resend-events-${batch}`,
          claimed.map((event) => eventRecorded.create(event)),
        );
      }
      events += claimed.length;
      if (claimed.length < SWEEP_BATCH) break;
    }
    if (reconnected) {
      log().info({ handedOver: events }, "webhook worker connected");
    }
    const deliveries = await step.run("claim-stuck-deliveries", () => claimStuckDeliveries());
    if (deliveries.length > 0) {
      await step.sendEvent(
        "request-stuck-deliveries",
        deliveries.map((delivery) => deliveryRequested.create(delivery)),
      );
    }
    const replays = await step.run("claim-stalled-replays", () => claimStalledReplays());
    if (replays.length > 0) {
      // A new Inngest event id each time: the first request (the replay's id) may still be within deduplication.
      const at = Date.now();
      await step.sendEvent(
        "request-stalled-replays",
        replays.map((replay) => replayRequested.create(replay, { id: `${replay.replayId}-${at}` })),
      );
    }
    const alerts = await step.run("check-alerts", () => checkWebhookAlerts());
    return { events, deliveries: deliveries.length, replays: replays.length, alerts, reconnected };
  },
);
