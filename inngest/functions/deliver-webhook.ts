import { RetryAfterError } from "inngest";
import { attemptDelivery, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_MS } from "../../server/webhooks/deliveries";
import { deliveryRequested, inngest } from "../client";

/** What {@link deliverWebhook} needs from Inngest's context: the triggering event and the zero-based attempt. */
export interface DeliverContext {
  event: { data: { deliveryId: string } };
  /** 0 for the first attempt, up to 4 for the fifth (Inngest `ctx.attempt`). */
  attempt: number;
}

/**
 * One scheduled attempt of a delivery (docs/api-contract.md §6.5): sign, POST, record (see `attemptDelivery`). On a
 * failure with attempts left it throws `RetryAfterError` with the next backoff delay (1 min, 5 min, 30 min, 2 h), so
 * Inngest runs it again with `attempt + 1`; the 5th failure closes the delivery FAILED and counts it against the
 * endpoint. A 410 Gone, a delivery no longer PENDING or a disabled endpoint end the run without retry.
 * @returns `{deliveryId, attempt, success, responseStatus, skipped}`.
 * @throws RetryAfterError when a retry should follow; database errors as they come (Inngest retries those too, and
 *         the sweeper requests a delivery again if its run is lost).
 */
export async function deliverWebhook({ event, attempt }: DeliverContext) {
  const { deliveryId } = event.data;
  const final = attempt >= WEBHOOK_MAX_ATTEMPTS - 1;
  const result = await attemptDelivery(deliveryId, { mode: "scheduled", final });
  const summary = {
    deliveryId,
    attempt: result.attempt,
    success: result.success,
    responseStatus: result.responseStatus,
    skipped: result.skipped,
  };
  if (result.skipped || result.success || result.gone || final) return summary;
  const delay = WEBHOOK_RETRY_DELAYS_MS[Math.min(attempt, WEBHOOK_RETRY_DELAYS_MS.length - 1)] ?? 60_000;
  throw new RetryAfterError(
    `delivery ${deliveryId} attempt ${attempt + 1} failed: ${result.error ?? "failure"}`,
    delay,
  );
}

/**
 * Deliver (docs/architecture.md, "Webhooks and the outbox"): 5 attempts in all (`retries: 4`), explicit backoff through
 * `RetryAfterError`. At most 10 attempts run at once per endpoint, so a bulk of 500 events does not flood one receiver.
 * Trigger: `crm/webhook.delivery.requested` `{deliveryId, endpointId, orgId}`.
 */
export const deliverWebhookFunction = inngest.createFunction(
  {
    id: "webhook-deliver",
    name: "Webhooks: deliver one event to one endpoint",
    retries: 4,
    concurrency: { key: "event.data.endpointId", limit: 10 },
    triggers: [deliveryRequested],
  },
  deliverWebhook,
);
