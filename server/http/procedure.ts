import { TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import { issuesToDetails } from "../contract/common";
import { databaseRefusal, sqlState } from "../db/statement-budget";
import { ApiError } from "../errors";
import { log } from "../observability/logger";
import { createCallerFactory } from "../trpc";
import { successReply } from "./envelope";
import type { Exchange, Step } from "./exchange";
import { API_PREFIX } from "./parse";
import { v1Router } from "./router";
import { BODY_METHODS, type RouteEntry } from "./routes";
import { unknownParametersError } from "./unknown-parameters";

type Procedure = (input: unknown) => Promise<unknown>;
type CallerTree = { [key: string]: CallerTree | Procedure };

const createCaller = createCallerFactory(v1Router);

/**
 * Maps what a procedure threw to the code (docs/api-contract.md §7), status and message. Input validation errors are
 * 400 `bad_request` when every issue is in a path parameter, else 422 `validation_error` (naming a query's unknown
 * parameters with the parameter each most likely meant, docs/api-contract.md §4.12); a statement the database
 * cancelled at its timeout or a deadlock that outlived its retries is 503 `timeout` or 409 `conflict`
 * (`databaseRefusal`, logged at warn); anything unexpected (an
 * output that fails its schema, a database error) is logged with the request id and becomes 500 `internal_error`
 * without internals.
 */
function toApiError(error: unknown, exchange: Exchange): ApiError {
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof ApiError) return cause;
  if (error instanceof TRPCError && error.code === "BAD_REQUEST" && cause instanceof ZodError) {
    const route = exchange.route;
    // A query's unknown parameters are named with the parameter each most likely meant (`lifecycleStatus`: did you
    // mean `lifecycle`?); a body's unknown fields stay issues like the others.
    const unknownInQuery =
      route && !BODY_METHODS.has(route.method)
        ? cause.issues.filter((issue) => issue.code === "unrecognized_keys" && issue.path.length === 0)
        : [];
    const names = unknownInQuery.flatMap((issue) => (issue.code === "unrecognized_keys" ? issue.keys : []));
    if (route && names.length > 0) {
      const others = issuesToDetails(cause.issues.filter((issue) => !unknownInQuery.includes(issue)));
      return unknownParametersError(names, route.queryParams, others);
    }
    const details = issuesToDetails(cause.issues);
    const pathParams = exchange.route?.pathParams ?? [];
    const inPath = details.every((detail) => detail.path.length === 1 && pathParams.includes(detail.path[0] as string));
    return inPath
      ? new ApiError("bad_request", "Malformed path parameter", { details })
      : new ApiError("validation_error", "Request validation failed", { details });
  }
  const refusal = databaseRefusal(cause ?? error);
  if (refusal) {
    log().warn(
      {
        requestId: exchange.requestId,
        route: exchange.route && `${API_PREFIX}${exchange.route.path}`,
        sqlState: sqlState(cause ?? error) ?? null,
      },
      `the database did not finish the request; answered ${refusal.status} ${refusal.code}`,
    );
    return refusal;
  }
  log().error(
    {
      requestId: exchange.requestId,
      route: exchange.route && `${API_PREFIX}${exchange.route.path}`,
      err: cause ?? error,
    },
    "procedure failed; answered 500 internal_error",
  );
  return new ApiError("internal_error", "Internal error; retry with exponential backoff");
}

/**
 * Calls a route's tRPC procedure through tRPC's caller with `input` and the exchange's principal.
 * @returns what the procedure returned.
 * @throws ApiError from the procedure, or as mapped by {@link toApiError}.
 */
export async function invokeProcedure(exchange: Exchange, route: RouteEntry, input: unknown): Promise<unknown> {
  if (!route.procedure) throw new Error("invokeProcedure needs a procedure route");
  const caller = createCaller({
    requestId: exchange.requestId,
    clientIp: exchange.clientIp,
    userAgent: exchange.userAgent,
    principal: exchange.principal,
  }) as unknown as CallerTree;
  const procedure = route.procedure
    .split(".")
    .reduce<CallerTree | Procedure>((node, key) => (node as CallerTree)[key] as CallerTree, caller) as Procedure;
  try {
    return await procedure(input);
  } catch (error) {
    throw toApiError(error, exchange);
  }
}

/**
 * Procedure: calls the route's procedure ({@link invokeProcedure}) with the exchange's input and serialises the success
 * envelope of docs/api-contract.md §2.1 once (lists lift `hasMore` and `nextCursor` to the top level; creating POSTs
 * answer 201; a bulk request in partial mode answers 207; a dry run answers 200 where the operation answers 202).
 * @throws ApiError from the procedure, or as mapped by {@link toApiError}.
 */
export const callProcedure: Step = async (exchange) => {
  const route = exchange.route;
  if (!route?.procedure) throw new Error("callProcedure needs a procedure route");
  let data = await invokeProcedure(exchange, route, exchange.input);
  if (route.meta.envelope === "list") {
    const page = data as { data: Record<string, unknown>[]; hasMore: boolean; nextCursor: string | null };
    const records = exchange.reshape ? await exchange.reshape(page.data) : page.data;
    return successReply(exchange.requestId, records, 200, { hasMore: page.hasMore, nextCursor: page.nextCursor });
  }
  if (exchange.reshape) data = (await exchange.reshape([data as Record<string, unknown>]))[0];
  const partial = route.meta.partialStatus && (data as { mode?: string } | null)?.mode === "partial";
  const dryRun = route.meta.dryRunStatus && (data as { dryRun?: boolean } | null)?.dryRun === true;
  const status = partial
    ? route.meta.partialStatus
    : dryRun
      ? route.meta.dryRunStatus
      : (route.meta.successStatus ?? 200);
  return successReply(exchange.requestId, data, status);
};
