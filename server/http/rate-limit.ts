import { ApiError } from "../errors";
import { recordRateLimitRefusal } from "../observability/metrics";
import { enforceRateLimit, type RateLimitDecision } from "../services/rate-limits";
import { resolveKey } from "./authenticate";
import type { Exchange, Step } from "./exchange";

function count(exchange: Exchange): Promise<RateLimitDecision> {
  const principal = exchange.principal;
  return enforceRateLimit(
    principal
      ? { kind: "key", apiKeyId: principal.apiKeyId, orgId: principal.orgId, ...principal.rateLimit }
      : { kind: "anonymous", ip: exchange.clientIp ?? "unknown", window: exchange.route?.meta.ownWindow },
  );
}

/**
 * Rate limit (docs/api-contract.md §8): counts the request against the key's and organisation's sliding windows when a
 * key was identified, else against the client address's anonymous window (a route with `ownWindow`, the status
 * endpoint, against the address's window of that name). A key left unresolved because the address's window was full
 * is looked up only if that window admits the request after all (a slot freed on the shared store), and then counted
 * against its own windows too. The decision's headers go on every answer (the pipeline adds them at the end); a
 * refusal is counted in `crm.rate_limit.refusals` (docs/architecture.md, "Observability").
 * @throws ApiError `rate_limited` (429) with `Retry-After` when a window is full.
 */
export const rateLimit: Step = async (exchange, next) => {
  let decision = await count(exchange);
  if (decision.allowed && exchange.keyDeferred) {
    await resolveKey(exchange, true);
    if (exchange.principal) decision = await count(exchange);
  }
  exchange.rateLimit = decision;
  if (!decision.allowed) {
    recordRateLimitRefusal(exchange.principal ? "key" : "anonymous");
    const seconds = decision.retryAfterSeconds ?? 1;
    throw new ApiError("rate_limited", `Rate limit exceeded; retry in ${seconds} seconds`, {
      headers: { "Retry-After": String(seconds) },
    });
  }
  return next();
};
