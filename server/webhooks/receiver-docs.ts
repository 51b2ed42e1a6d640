// What the receiver guide (/docs/webhooks) shows, kept beside the code it describes so the two cannot drift apart; a
// test runs VERIFY_SNIPPET against real deliveries.
import { WEBHOOK_DISABLE_AFTER_FAILED_DELIVERIES, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_RETRY_DELAYS_MS } from "./deliveries";
import { RESPONSE_BODY_LIMIT, WEBHOOK_TIMEOUT_MS } from "./transport";

/** Signature verification for receivers (docs/api-contract.md §6.4) in Node with `node:crypto` only; an ES module. */
export const VERIFY_SNIPPET = `import { createHmac, timingSafeEqual } from "node:crypto";

// rawBody: the request body exactly as received (a string), before any JSON parsing.
export function verifyWebhook(rawBody, signatureHeader, secret, toleranceSeconds = 300) {
  const parts = (signatureHeader ?? "").split(",").map((part) => part.split("="));
  const t = Number(parts.find(([key]) => key === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(\`\${t}.\${rawBody}\`).digest("hex"));
  return parts
    .filter(([key]) => key === "v1")
    .some(([, value]) => {
      const given = Buffer.from(value ?? "");
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}`;

/** An example delivery body (docs/api-contract.md §6.2). */
export const EXAMPLE_PAYLOAD = JSON.stringify(
  {
    id: "evt_1795430400_k3XbQ9mZt2Lw",
    event: "deal.closed_won",
    sequence: 4211,
    timestamp: "2026-11-21T10:00:00.000Z",
    orgId: "cmf2x7q0a0000abcd1234efgh",
    data: { id: "cmf2x8r1b0001abcd5678ijkl", name: "Managed backup", stage: "CLOSED_WON", "…": "…" },
  },
  null,
  2,
);

function duration(ms: number): string {
  if (ms >= 3_600_000) return `${ms / 3_600_000} h`;
  if (ms >= 60_000) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/** The retry schedule in words: one row per attempt with the wait before it. */
export const RETRY_SCHEDULE: ReadonlyArray<{ attempt: number; after: string }> = Array.from(
  { length: WEBHOOK_MAX_ATTEMPTS },
  (_, index) => ({
    attempt: index + 1,
    after: index === 0 ? "at once" : `${duration(WEBHOOK_RETRY_DELAYS_MS[index - 1] ?? 0)} after attempt ${index}`,
  }),
);

/** Figures the guide quotes. */
export const DELIVERY_FACTS = {
  attempts: WEBHOOK_MAX_ATTEMPTS,
  timeout: duration(WEBHOOK_TIMEOUT_MS),
  disableAfter: WEBHOOK_DISABLE_AFTER_FAILED_DELIVERIES,
  responseBodyLimit: RESPONSE_BODY_LIMIT,
} as const;
