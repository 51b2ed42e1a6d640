import { hasScope } from "../auth/scopes";
import { ApiError } from "../errors";
import { authenticateApiKey } from "../services/api-keys";
import type { Step } from "./exchange";

/**
 * Identify: resolves the Bearer key of a route that needs one (docs/api-contract.md §5) to its principal. A failure
 * (401) is kept on the exchange as its refusal, answered by {@link refuse} once the rate limit has counted the request
 * against the client's address.
 */
export const identify: Step = async (exchange, next) => {
  if (exchange.route?.meta.scope && exchange.refusal === undefined) {
    try {
      exchange.principal = await authenticateApiKey(exchange.request.header("authorization") ?? null);
    } catch (error) {
      exchange.refusal = error;
    }
  }
  return next();
};

/**
 * Refuse: answers what the steps before the rate limit found (a malformed target 400, an unknown path 404, a wrong
 * method 405 with `Allow`, an invalid key 401), OPTIONS with 204 and `Allow`, and a key that lacks the route's scope
 * with 403 `insufficient_scope` (docs/api-contract.md §5), before anything about the input is revealed.
 * @throws ApiError the refusal found, or `insufficient_scope` (403).
 */
export const refuse: Step = async (exchange, next) => {
  if (exchange.refusal !== undefined) throw exchange.refusal;
  if (exchange.allow) {
    return {
      status: 204,
      headers: { Allow: [...exchange.allow, "OPTIONS"].join(", "), "X-Request-Id": exchange.requestId },
      body: null,
    };
  }
  const scope = exchange.route?.meta.scope;
  if (scope && !(exchange.principal && hasScope(exchange.principal.scopes, scope))) {
    throw new ApiError("insufficient_scope", `This API key lacks the ${scope} scope required by this endpoint`);
  }
  return next();
};
