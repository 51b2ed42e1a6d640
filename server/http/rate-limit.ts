import { ApiError } from "../errors";
import { recordRateLimitRefusal } from "../observability/metrics";
import { enforceRateLimit } from "../platform/limits/rate-limits";
import type { Step } from "./exchange";

/**
 * Rate limit (docs/api-contract.md §8): counts the request against the key's and organisation's sliding windows when a
 * key was identified, else against the client address's anonymous window (a route with `ownWindow`, the status
 * endpoint, against the address's window of that name). The decision's headers go on every answer (the pipeline adds
 * them at the end); a refusal is counted in `crm.rate_limit.refusals` (docs/architecture.md, "Observability").
 * @throws ApiError `rate_limited` (429) with `Retry-After` when a window is full.
 */
export const rateLimit: Step = async (exchange, next) => {
  const principal = exchange.principal;
  const decision = await enforceRateLimit(
    principal
      ? { kind: "key", apiKeyId: principal.apiKeyId, orgId: principal.orgId, ...principal.rateLimit }
      : { kind: "anonymous", ip: exchange.clientIp ?? "unknown", window: exchange.route?.meta.ownWindow },
  );
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
