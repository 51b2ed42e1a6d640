// A webhook endpoint as the API and the settings area show it (docs/api-contract.md §2.11): never its secret.
import type { SubscribableEvent } from "./schema";

/** An endpoint as the settings area shows it: never its secret (see {@link revealWebhookSecret}). */
export interface WebhookEndpointView {
  /** `wh_<24 hex>` */
  id: string;
  /** Absolute http(s) URL deliveries are POSTed to. */
  url: string;
  description: string | null;
  /** Event names of docs/api-contract.md §6.1 and `<resource>.*` wildcards, or exactly `["*"]` for all. */
  events: SubscribableEvent[];
  /**
   * Only `*.updated` events that changed one of these fields are delivered (docs/api-contract.md §6.9); null: no such
   * filter.
   */
  changedFields: string[] | null;
  /** False: nothing is delivered until it is enabled again. */
  enabled: boolean;
  /** Why it was disabled: "disabled by a user", "the receiver answered 410 Gone", or the consecutive-failure rule. */
  disabledReason: string | null;
  disabledAt: Date | null;
  /**
   * Deliveries in a row that ended failed (all 5 attempts); reset by any successful attempt (docs/api-contract.md
   * §6.5).
   */
  consecutiveFailures: number;
  createdAt: Date;
  updatedAt: Date;
  /** Until when the secret before the last rotation also signs; null when there is none or it has expired. */
  previousSecretExpiresAt: Date | null;
}

/** The columns {@link toView} needs, for Prisma selects. */
export const viewSelect = {
  id: true,
  url: true,
  description: true,
  events: true,
  enabled: true,
  disabledReason: true,
  disabledAt: true,
  consecutiveFailures: true,
  createdAt: true,
  updatedAt: true,
  previousSecretExpiresAt: true,
  changedFields: true,
} as const;

// As stored: `events` is a text array the services wrote from checked names only; `changedFields` is empty for none.
type ViewRow = Omit<{ [K in keyof typeof viewSelect]: WebhookEndpointView[K] }, "events" | "changedFields"> & {
  events: string[];
  changedFields: string[];
};

/**
 * An endpoint row as the API and the settings area show it (never its secret): the previous secret's expiry only
 * while it still signs, and an empty `changedFields` filter as null.
 */
export function toView(row: ViewRow, now = new Date()): WebhookEndpointView {
  const expires = row.previousSecretExpiresAt;
  return {
    ...row,
    events: row.events as SubscribableEvent[],
    changedFields: row.changedFields.length > 0 ? row.changedFields : null,
    previousSecretExpiresAt: expires && expires > now ? expires : null,
  };
}

/**
 * An endpoint as the `webhook_endpoint.disabled` event carries it (docs/api-contract.md §6.1): its view with the URL
 * reduced to its origin (`https://hooks.example.com:8443`). The event reaches every endpoint subscribed to it and every
 * key with `events:read`, and a URL's path and query often hold the receiver's own credentials.
 */
export type DisabledEndpointView = Omit<WebhookEndpointView, "url"> & { origin: string };

/** {@link DisabledEndpointView} of a view: `url` replaced by its origin (`"null"` for a URL without one). */
export function toDisabledView(view: WebhookEndpointView): DisabledEndpointView {
  const { id, url, ...rest } = view;
  return { id, origin: URL.parse(url)?.origin ?? "null", ...rest };
}
