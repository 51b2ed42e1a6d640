import { REPLAY_STEP_BUDGET_MS, sendReplayStep } from "../../server/webhooks/replays";
import { inngest, replayRequested } from "../client";

/**
 * Steps one run takes at most: 10,000 deliveries at 10 a second are about 100 steps of
 * {@link REPLAY_STEP_BUDGET_MS}; the rest is room for steps cut short. A run that reaches it ends and the sweeper
 * requests the replay again.
 */
export const REPLAY_MAX_STEPS = 300;

/**
 * What {@link replayWebhooks} needs from Inngest's context: the triggering event and `step.run`.
 */
export interface ReplayContext {
  event: { data: { replayId: string } };
  step: { run: <T>(id: string, fn: () => Promise<T>) => Promise<unknown> };
}

/**
 * Runs one replay (docs/api-contract.md §6.10; docs/architecture.md, "Webhooks and the outbox"): step after step, each
 * sending for up to 10 s at most 10 deliveries a second (`sendReplayStep`), until the replay has ended (completed,
 * cancelled, stopped) or another run holds it.
 * @returns the last step's progress `{done, busy, sent, status}` and the number of steps.
 */
export async function replayWebhooks({ event, step }: ReplayContext) {
  let steps = 0;
  let sent = 0;
  for (let index = 0; index < REPLAY_MAX_STEPS; index++) {
    const progress = (await step.run(`send-${index}`, () => sendReplayStep(event.data.replayId))) as Awaited<
      ReturnType<typeof sendReplayStep>
    >;
    steps++;
    sent += progress.sent;
    if (progress.done || progress.busy) return { ...progress, sent, steps };
  }
  return { done: false, busy: false, sent, steps, status: "running" as const };
}

/**
 * Replay (docs/architecture.md, "Webhooks and the outbox"): one run per replay, one at a time per endpoint (the
 * replay's lease and its stored last send keep the rate at 10 a second across instances and runs). Its deliveries go
 * beside the endpoint's normal ones, which `webhook-deliver` keeps sending meanwhile. Trigger:
 * `crm/webhook.replay.requested` `{replayId, endpointId, orgId}`.
 */
export const replayWebhooksFunction = inngest.createFunction(
  {
    id: "webhook-replay",
    name: "Webhooks: replay failed deliveries",
    retries: 4,
    concurrency: { key: "event.data.endpointId", limit: 1 },
    triggers: [replayRequested],
  },
  replayWebhooks,
);
