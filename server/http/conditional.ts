import { ApiError } from "../errors";
import { tagMatches, writeIfMatch } from "../records/preconditions";
import { entityTag } from "./envelope";
import type { Reply, Step } from "./exchange";
import { invokeProcedure } from "./procedure";
import type { RouteEntry } from "./routes";

/**
 * Longest `If-Match` or `If-None-Match` accepted, in characters (about 280 tags); the OpenAPI document says so
 * (docs/architecture.md, "The REST facade").
 */
export const CONDITION_MAX_LENGTH = 8_192;

/** A conditional header's value, refused when longer than {@link CONDITION_MAX_LENGTH}. */
function condition(read: (name: string) => string | undefined, name: "If-Match" | "If-None-Match"): string | undefined {
  const value = read(name.toLowerCase());
  if (value !== undefined && value.length > CONDITION_MAX_LENGTH) {
    throw new ApiError("bad_request", `${name} is longer than ${CONDITION_MAX_LENGTH} characters`, {
      details: [{ path: [name], message: `must be at most ${CONDITION_MAX_LENGTH} characters` }],
    });
  }
  return value;
}

/**
 * Conditional requests (RFC 9110 §13): every answer that is not a list carries `ETag` (see `successReply`).
 * - GET with `If-None-Match` naming the current tag (or `*`) → 304 Not Modified without a body, with `ETag`.
 * - PATCH or DELETE of a single record with `If-Match` → the write runs only if the record's current representation
 *   (as its GET returns it) has that tag, checked under the record's lock in the write's transaction; otherwise 412
 *   `precondition_failed` with the current `ETag`. `If-Match` elsewhere → 400 `bad_request`, and so is either header
 *   longer than {@link CONDITION_MAX_LENGTH} characters.
 * @param routes the route table, to find the GET of the record a write targets.
 */
export function conditionalRequests(routes: readonly RouteEntry[]): Step {
  const readOf = new Map<string, RouteEntry>();
  for (const route of routes) {
    if (route.method === "GET" && route.procedure && route.pathParams.length > 0) readOf.set(route.path, route);
  }
  const conditional: Step = async (exchange, next) => {
    if (exchange.method === "GET") {
      const wanted = condition((name) => exchange.request.header(name), "If-None-Match");
      const reply = await next();
      const tag = reply.headers.ETag;
      if (!wanted || reply.status !== 200 || !tag || !tagMatches(wanted, tag, true)) return reply;
      const { "Content-Type": _type, ...headers } = reply.headers;
      return { status: 304, headers, body: null } satisfies Reply;
    }
    const ifMatch = condition((name) => exchange.request.header(name), "If-Match");
    if (!ifMatch) return next();
    const route = exchange.route;
    const read = route ? readOf.get(route.path) : undefined;
    const principal = exchange.principal;
    if (!route || !read || !principal || (exchange.method !== "PATCH" && exchange.method !== "DELETE")) {
      throw new ApiError("bad_request", "If-Match is accepted on PATCH and DELETE of a single record only", {
        details: [{ path: ["If-Match"], message: "not supported on this operation" }],
      });
    }
    return writeIfMatch({
      resource: route.path.split("/")[1] ?? "",
      orgId: principal.orgId,
      id: Object.values(exchange.pathParams)[0] ?? "",
      ifMatch,
      read: () => invokeProcedure(exchange, read, exchange.pathParams),
      tagOf: (data) => entityTag(JSON.stringify(data)),
      write: next,
    });
  };
  return conditional;
}
