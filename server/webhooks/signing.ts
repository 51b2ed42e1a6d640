import { createHmac } from "node:crypto";
import type { EventPayload } from "../platform/events-feed/schema";

/** `User-Agent` of every delivery (docs/api-contract.md §6.3, §9). */
export const WEBHOOK_USER_AGENT = "Service-Webhooks/1.1";

/**
 * Serialises a delivery's body once: the event's payload (docs/api-contract.md §6.2 with `actor`, `changedFields` and
 * `previous`, built by `eventPayload` in server/platform/events-feed/service.ts, the same as the events feed serves). The
 * returned text is both what is signed and what is sent (docs/architecture.md, "Webhooks and the outbox": the bytes
 * signed are the bytes sent).
 */
export function serializePayload(payload: EventPayload): string {
  return JSON.stringify(payload);
}

/**
 * Lowercase hex HMAC-SHA256 of `<t>.<body>` keyed with the whole secret string `whsec_…` as UTF-8 (docs/api-contract.md
 * §6.4 step 2).
 * @param timestamp Unix seconds.
 */
export function computeSignature(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/**
 * The Standard Webhooks signing key of a secret: the bytes of its base64 part after `whsec_`, as the
 * `standardwebhooks` libraries derive them (Node's decoder also reads the base64url secrets made before).
 */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

/**
 * The headers of one delivery attempt (docs/api-contract.md §6.3):
 * - `Service-Signature: t=<unix>,v1=<hex>` with one `v1=` per valid secret: the current one first, then the previous
 *   one while it is still valid after a rotation (24 h);
 * - `Service-Event`, `Service-Event-Id`, `Content-Type: application/json`, `User-Agent: Service-Webhooks/1.1`;
 * - legacy `X-MSP-Signature` (hex HMAC-SHA256 of the raw body only, current secret) and `X-MSP-Timestamp` (unix seconds);
 * - Standard Webhooks: `webhook-id` (the event id), `webhook-timestamp` (unix seconds) and
 *   `webhook-signature`, one `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` per valid secret, space-separated,
 *   keyed with the secret's decoded bytes ({@link standardKey}).
 * @param secrets current secret first; later entries are previous secrets still valid.
 * @param timestamp Unix seconds of the attempt, so a retry hours later still passes the receiver's 5-minute tolerance.
 */
export function signedHeaders(options: {
  body: string;
  eventId: string;
  eventName: string;
  secrets: readonly string[];
  timestamp: number;
}): Record<string, string> {
  const { body, eventId, eventName, secrets, timestamp } = options;
  const [current] = secrets;
  if (!current) throw new Error("a delivery needs a signing secret");
  const signatures = secrets.map((secret) => `v1=${computeSignature(secret, timestamp, body)}`);
  const standard = secrets.map(
    (secret) =>
      `v1,${createHmac("sha256", standardKey(secret)).update(`${eventId}.${timestamp}.${body}`).digest("base64")}`,
  );
  return {
    "Content-Type": "application/json",
    "User-Agent": WEBHOOK_USER_AGENT,
    "Service-Event": eventName,
    "Service-Event-Id": eventId,
    "Service-Signature": `t=${timestamp},${signatures.join(",")}`,
    "X-MSP-Signature": createHmac("sha256", current).update(body).digest("hex"),
    "X-MSP-Timestamp": String(timestamp),
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": standard.join(" "),
  };
}
