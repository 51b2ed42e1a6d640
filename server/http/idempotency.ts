import { IDEMPOTENCY_HEADER, IDEMPOTENT_METHODS, parseIdempotencyKey, runIdempotent } from "../platform/idempotency";
import { webhookSecretSeal } from "../webhooks/sealed-secrets";
import { entityTag } from "./envelope";
import type { Step } from "./exchange";

/**
 * Idempotency (docs/api-contract.md §8, docs/architecture.md, "Idempotency"): for POST, PATCH and DELETE with an
 * `Idempotency-Key`, runs the rest of the pipeline in one transaction with the key's record (`runIdempotent`; outside
 * any transaction for a route marked `ownTransactions`, and with the secret sealed for one marked `secretInAnswer`), or
 * replays the stored answer with `X-Idempotent-Replay: true` and `X-Original-Request-Id`. Other requests pass through.
 * @throws ApiError `bad_request` (400) for a malformed key; `idempotency_conflict` (422), `idempotency_in_progress`
 *         (409) as `runIdempotent` says.
 */
export const idempotency: Step = async (exchange, next) => {
  const principal = exchange.principal;
  if (!principal || !exchange.route?.procedure || !IDEMPOTENT_METHODS.has(exchange.method)) return next();
  const key = parseIdempotencyKey(exchange.request.header(IDEMPOTENCY_HEADER.toLowerCase()) ?? null);
  if (!key) return next();
  const result = await runIdempotent(
    {
      orgId: principal.orgId,
      apiKeyId: principal.apiKeyId,
      key,
      method: exchange.method,
      path: exchange.query.size === 0 ? exchange.path : `${exchange.path}?${new URLSearchParams([...exchange.query])}`,
      body: exchange.body,
      requestId: exchange.requestId,
    },
    next,
    {
      seal: exchange.route.meta.secretInAnswer ? webhookSecretSeal : undefined,
      ownTransactions: exchange.route.meta.ownTransactions === true,
    },
  );
  if (!("replayOf" in result)) return result;
  return {
    status: result.status,
    body: result.body,
    headers: {
      ...result.headers,
      ...replayedTag(result.status, result.body),
      "X-Request-Id": exchange.requestId,
      "X-Idempotent-Replay": "true",
      "X-Original-Request-Id": result.replayOf,
    },
  };
};

/** The `ETag` a replayed answer had: the tag of its stored `data`, for answers that are not lists. */
function replayedTag(status: number, body: string | null): Record<string, string> {
  if (status >= 300 || !body) return {};
  const stored = JSON.parse(body) as { data?: unknown; hasMore?: unknown };
  if (stored.data === undefined || "hasMore" in stored) return {};
  return { ETag: entityTag(JSON.stringify(stored.data)) };
}
