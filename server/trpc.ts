import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { ApiError, type ErrorCode } from "./errors";
import type { ApiKeyActor } from "./identity/audit-trail/service";
import type { Scope } from "./platform/api-keys/scopes";
import type { ApiKeyPrincipal } from "./platform/api-keys/service";

/**
 * Procedure metadata: trpc-to-openapi's `openapi` block plus ours. `scope` is the key scope the operation requires
 * (docs/api-contract.md §4, §5; the REST facade checks it before reading the input), `successStatus` its status on
 * success (201 for creating POSTs, 202 for work the worker does afterwards, docs/api-contract.md §4), and `envelope: "list"` marks procedures that return
 * `{ data, hasMore, nextCursor }` to be lifted into the top-level envelope (docs/api-contract.md §2.1).
 */
export type Meta = OpenApiMeta<{
  /** One scope, or several of which the key needs any one (search: each result type needs its own read scope). */
  scope?: Scope | readonly Scope[];
  successStatus?: 200 | 201 | 202;
  envelope?: "list";
  /** Status of an answer whose data has `mode: "partial"` (bulk requests in partial mode). */
  partialStatus?: 207;
  /** Status of an answer whose data has `dryRun: true` (a replay's dry run, docs/api-contract.md §6.10). */
  dryRunStatus?: 200;
  /** Error codes the operation answers beyond those its shape implies (`conflict` for a state that refuses it). */
  errors?: readonly ErrorCode[];
  /** Input fields of a body method (POST, PATCH) sent as query parameters (`?mode=partial`). */
  query?: readonly string[];
  /**
   * An anonymous window of the route's own per client address instead of the one all anonymous requests share, so that
   * other anonymous traffic (bad keys) cannot use it up: the status endpoint (docs/architecture.md,
   * "Key-value store and rate limits").
   */
  ownWindow?: "status";
  /**
   * The answer carries a webhook signing secret: an idempotent replay stores it sealed and reads it back from the
   * endpoint while it stands (docs/architecture.md, "Idempotency").
   */
  secretInAnswer?: true;
  /**
   * The operation must not run inside the idempotency transaction: it waits for an outbound request (a webhook test
   * event, a redelivery), or first stores what other requests left in this process's memory (an erasure stores the
   * queued audit rows it then redacts). With an `Idempotency-Key` it runs between a claim of the key and its stored
   * answer, with no transaction open (docs/architecture.md, "Idempotency").
   */
  ownTransactions?: true;
  /**
   * The operation takes one of the organisation's slots for expensive work while it runs (docs/api-contract.md §8.5;
   * lists take one when sorted by a custom field, without this mark).
   */
  expensive?: "search" | "bulk" | "erasure";
}>;

/**
 * tRPC context of the public API, built by the REST facade for each call: the request id, the client's address and
 * user agent and, on routes that need a key, the principal it authenticated and authorised
 * (server/http/authenticate.ts).
 */
export interface Context {
  requestId: string;
  /** The client address as the request log records it (`clientAddress`, server/http/origin.ts). */
  clientIp: string | null;
  userAgent: string | null;
  principal?: ApiKeyPrincipal;
}

const t = initTRPC.context<Context>().meta<Meta>().create();

/** Builds routers. */
export const router = t.router;

/** Makes callers of a router: how the REST facade calls a procedure (tRPC's public API). */
export const createCallerFactory = t.createCallerFactory;

/** A procedure that needs no key (only `GET /status`, docs/api-contract.md §4.8). */
export const publicProcedure = t.procedure;

/**
 * A procedure that needs a Bearer API key holding `scope`, or any one of several scopes (docs/api-contract.md §5). The
 * REST facade authenticates the key and checks the scope before the input is parsed, so an unauthenticated caller
 * learns nothing about the schema; this narrows `ctx.principal` (`orgId`, `apiKeyId`, `scopes`, `isTest`) for the
 * procedure, and gives `ctx.auditActor`: the key, its client address and user agent as the settings audit trail
 * records a change made with it (docs/api-contract.md §5.10).
 * @throws ApiError `unauthorized` (401) when called without a principal.
 */
export function apiProcedure(scope: Scope | readonly Scope[]) {
  return t.procedure.meta({ scope }).use(({ ctx, next }) => {
    if (!ctx.principal) throw new ApiError("unauthorized", "Missing API key: send Authorization: Bearer <API_KEY>");
    const auditActor: ApiKeyActor = {
      apiKeyId: ctx.principal.apiKeyId,
      ip: ctx.clientIp,
      userAgent: ctx.userAgent,
    };
    return next({ ctx: { principal: ctx.principal, auditActor } });
  });
}
