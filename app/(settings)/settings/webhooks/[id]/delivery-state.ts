import type { DeliveryState } from "../../../../../server/webhooks/stats";

/** A delivery's state in the pages' words: a pending delivery is being retried. */
export const STATE_LABELS: Record<DeliveryState, string> = {
  succeeded: "succeeded",
  failed: "failed",
  pending: "being retried",
};

/** The badge class of a delivery's state. */
export function stateBadge(state: DeliveryState): string {
  return `badge ${state === "succeeded" ? "ok" : state === "failed" ? "error" : "warn"}`;
}
