import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import { hasScope, type Scope } from "./auth/scopes";
import { ApiError } from "./errors";
import { type ApiKeyPrincipal, authenticateApiKey } from "./services/api-keys";

/**
 * Procedure metadata: trpc-to-openapi's `openapi` block plus ours. `scope` is the key scope the operation requires
 * (spec §4, §5), `successStatus` its status on success (201 for creating POSTs, spec §4), and `envelope: "list"` marks
 * procedures that return `{ data, hasMore, nextCursor }` to be lifted into the top-level envelope (spec §2.1).
 */
export type Meta = OpenApiMeta<{ scope?: Scope; successStatus?: 200 | 201; envelope?: "list" }>;

/**
 * Per-request state shared between the REST facade and the procedure that runs: the facade creates it, the
 * authentication middleware records the principal, and the facade reads it back for the audit log.
 */
export interface RequestState {
  requestId: string;
  principal?: ApiKeyPrincipal;
}

/** tRPC context of the public API: the incoming request and its {@link RequestState}. */
export interface Context {
  req: Request;
  state: RequestState;
}

const t = initTRPC.context<Context>().meta<Meta>().create();

/** Builds routers. */
export const router = t.router;

/** A procedure that needs no key (only `GET /status`, spec §4.8). */
export const publicProcedure = t.procedure;

/**
 * A procedure that needs a Bearer API key holding `scope` (spec §5). Adds `ctx.principal` (`orgId`, `apiKeyId`,
 * `scopes`, `isTest`). The key is checked before the input is parsed, so an unauthenticated caller learns nothing
 * about the schema.
 * @throws ApiError `unauthorized` (401) without a valid key; `insufficient_scope` (403) when the key lacks `scope`.
 */
export function apiProcedure(scope: Scope) {
  return t.procedure.meta({ scope }).use(async ({ ctx, next }) => {
    // The REST facade authenticates before rate limiting and idempotency; other callers are authenticated here.
    const principal = ctx.state.principal ?? (await authenticateApiKey(ctx.req.headers.get("authorization")));
    ctx.state.principal = principal;
    if (!hasScope(principal.scopes, scope)) {
      throw new ApiError("insufficient_scope", `This API key lacks the ${scope} scope required by this endpoint`);
    }
    return next({ ctx: { principal } });
  });
}
