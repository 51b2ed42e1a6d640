import { deliverWebhookFunction } from "./functions/deliver-webhook";
import { fanOutEventFunction } from "./functions/fan-out-event";
import { purgeArchivedCustomFieldsFunction } from "./functions/purge-archived-custom-fields";
import { purgeExpiredEventsFunction } from "./functions/purge-expired-events";
import { purgeExpiredSignInsFunction } from "./functions/purge-expired-sign-ins";
import { purgeIdempotencyKeysFunction } from "./functions/purge-idempotency-keys";
import { refreshHealthScoresFunction } from "./functions/refresh-health-scores";
import { reindexSearchFunction } from "./functions/reindex-search";
import { replayWebhooksFunction } from "./functions/replay-webhooks";
import { rollUpUsageFunction } from "./functions/roll-up-usage";
import { sweepOutboxFunction } from "./functions/sweep-outbox";

export { inngest } from "./client";

/** Every Inngest function of the service, served at `/api/inngest` (app/api/inngest/route.ts). */
export const functions = [
  fanOutEventFunction,
  deliverWebhookFunction,
  replayWebhooksFunction,
  sweepOutboxFunction,
  purgeIdempotencyKeysFunction,
  purgeExpiredEventsFunction,
  purgeExpiredSignInsFunction,
  refreshHealthScoresFunction,
  rollUpUsageFunction,
  purgeArchivedCustomFieldsFunction,
  reindexSearchFunction,
];
