import { ApiError } from "../errors";
import { hasScope } from "../platform/api-keys/scopes";
import { authenticateApiKey } from "../platform/api-keys/service";
import type { Step } from "./exchange";

/**
 * Identify: resolves the Bearer key of a route that needs one (docs/api-contract.md §5) to its principal, whatever the
 * client address's anonymous window says: a valid key is always looked up (or served from the key cache) and counted
 * against its own windows, and only a key that may be valid costs a lookup (docs/architecture.md, "API keys and the
 * key cache"). A failure (401, or 400 `bad_request` for a repeated `Authorization` header, which node:http would
 * silently cut to its first value while a proxy may read the last) is kept on the exchange as its refusal, answered by
 * {@link refuse} once the rate limit has counted the request against the client's address.
 */
export const identify: Step = async (exchange, next) => {
  if (exchange.route?.meta.scope && exchange.refusal === undefined) {
    if (exchange.request.repeated("authorization")) {
      exchange.refusal = new ApiError("bad_request", "Send one Authorization header: this request has several", {
        details: [{ path: ["Authorization"], message: "repeated header" }],
      });
    } else {
      try {
        exchange.principal = await authenticateApiKey(exchange.request.header("authorization") ?? null);
      } catch (error) {
        exchange.refusal = error;
      }
    }
  }
  return next();
};

/**
 * Refuse: answers what the steps before the rate limit found (a malformed target 400, an unknown path 404, a wrong
 * method 405 with `Allow`, a repeated `Authorization` header 400, an invalid key 401), OPTIONS with 204 and `Allow`,
 * and a key that lacks the route's scope (or every one of its scopes, when it accepts several) with 403
 * `insufficient_scope` (docs/api-contract.md §5), before anything about the input is revealed.
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
  const granted = exchange.principal?.scopes ?? [];
  if (typeof scope === "string" && !hasScope(granted, scope)) {
    throw new ApiError("insufficient_scope", `This API key lacks the ${scope} scope required by this endpoint`);
  }
  if (Array.isArray(scope) && !scope.some((one) => hasScope(granted, one))) {
    throw new ApiError(
      "insufficient_scope",
      `This API key has none of the scopes this endpoint accepts: ${scope.join(", ")}`,
    );
  }
  return next();
};
