import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { ZodError } from "zod";
import { findUnstorableText } from "../contract/storable";
import { databaseRefusal, sqlState } from "../db/statement-budget";
import { ApiError, ERROR_CODES, type ErrorCode } from "../errors";
import { recordRefusal } from "../identity/audit-trail/service";
import { can, type Permission, refusalMessage } from "../identity/roles";
import {
  actorOf,
  factorStepUpRequired,
  isRecentlyAuthenticated,
  mayChangeSignInFactors,
  resolveSettingsSession,
  type SettingsRequest,
  type SettingsSessionState,
  type SignedInMember,
  StepUpRequiredError,
  secondFactorNeeded,
} from "../identity/session";
import { log } from "../observability/logger";

/**
 * Context of the settings router (docs/architecture.md, "Settings: sign-in, team and roles"): the request the action
 * runs for (public origin, headers with the session cookie, client address, user agent). Built by
 * `app/api/trpc/[trpc]/route.ts` from the HTTP request, or by the server-rendered pages from `headers()`.
 */
export interface SettingsContext {
  request: SettingsRequest;
  /**
   * The request's session already resolved, when the caller has it: a page resolves it once for its layout and all
   * the procedures it calls. Without it every call resolves the session itself.
   */
  session?: Promise<SettingsSessionState>;
}

// ApiError codes (docs/api-contract.md §7) as tRPC codes, so the HTTP door answers with the same statuses as the REST
// API.
const TRPC_CODES: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  bad_request: "BAD_REQUEST",
  invalid_json: "PARSE_ERROR",
  unauthorized: "UNAUTHORIZED",
  insufficient_scope: "FORBIDDEN",
  not_found: "NOT_FOUND",
  method_not_allowed: "METHOD_NOT_SUPPORTED",
  validation_error: "UNPROCESSABLE_CONTENT",
  idempotency_conflict: "UNPROCESSABLE_CONTENT",
  idempotency_in_progress: "CONFLICT",
  conflict: "CONFLICT",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  headers_too_large: "BAD_REQUEST",
  // tRPC has no 410; the settings door never reads the events feed.
  cursor_expired: "BAD_REQUEST",
  precondition_failed: "PRECONDITION_FAILED",
  rate_limited: "TOO_MANY_REQUESTS",
  timeout: "SERVICE_UNAVAILABLE",
  internal_error: "INTERNAL_SERVER_ERROR",
};

/**
 * Whether `error` is our {@link ApiError}, by its shape rather than its class: a production build holds more than one
 * copy of server/errors.ts (Next.js bundles its own beside dist/serve.js's), whose classes differ.
 */
export function isApiError(error: unknown): error is ApiError {
  return (
    error instanceof Error &&
    error.name === "ApiError" &&
    typeof (error as ApiError).code === "string" &&
    Object.hasOwn(ERROR_CODES, (error as ApiError).code)
  );
}

/**
 * The message a settings form shows for an error thrown by a settings procedure: the ApiError's message with the reason
 * of each detail, the zod issues of a refused input ("name: Too small…"), or a generic text for anything unexpected
 * (never internals).
 */
export function settingsErrorMessage(error: unknown): string {
  const cause = error instanceof TRPCError ? (error.cause ?? error) : error;
  if (isApiError(cause)) {
    // Every refusal names its reason: the details, unless the message already carries them.
    const reasons = (cause.details ?? [])
      .filter((detail) => !cause.message.includes(detail.message))
      .map((detail) => `${detail.path.join(".") || "input"}: ${detail.message}`);
    return reasons.length > 0 ? `${cause.message}: ${reasons.join("; ")}` : cause.message;
  }
  if (cause instanceof ZodError) {
    return cause.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`).join("; ");
  }
  if (error instanceof TRPCError && error.code === "UNAUTHORIZED") return "Your session has ended: sign in again";
  if (error instanceof TRPCError && error.code === "FORBIDDEN") return error.message;
  return "Something went wrong; please try again";
}

const t = initTRPC.context<SettingsContext>().create({
  errorFormatter({ shape, error }) {
    const apiError = isApiError(error.cause) ? error.cause : null;
    // Internal failures keep their details in the server log, never in the response.
    const message =
      apiError || error.cause instanceof ZodError || error.code !== "INTERNAL_SERVER_ERROR"
        ? settingsErrorMessage(error)
        : "Internal error";
    return { ...shape, message, data: { ...shape.data, stack: undefined, apiCode: apiError?.code ?? null } };
  },
});

/** Builds settings routers. */
export const router = t.router;

/** Makes server-side callers of the settings router (server components and server actions). */
export const createCallerFactory = t.createCallerFactory;

/**
 * Every settings procedure, through either door (the pages' server-side caller, `/api/trpc`): our refusals
 * ({@link ApiError}s the services and better-auth's error map throw, and the database's timeouts and exhausted
 * deadlock retries as `databaseRefusal` maps them) become tRPC errors with their status (401/403/404/409/422/429/503),
 * and anything else is logged with the request id and the procedure, answered as a generic
 * 500 without internals (docs/architecture.md, "Settings: sign-in, team and roles").
 */
const settingsProcedure = t.procedure.use(async ({ ctx, next, path, type }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  if (isApiError(cause)) {
    throw new TRPCError({ code: TRPC_CODES[cause.code], message: cause.message, cause });
  }
  const refusal = databaseRefusal(cause);
  if (refusal) {
    log().warn(
      { sqlState: sqlState(cause) ?? null, requestId: ctx.request.requestId, procedure: path, type },
      `the database did not finish the settings procedure; answered ${refusal.code}`,
    );
    throw new TRPCError({ code: TRPC_CODES[refusal.code], message: refusal.message, cause: refusal });
  }
  if (result.error.code === "INTERNAL_SERVER_ERROR") {
    log().error(
      { err: cause ?? result.error, requestId: ctx.request.requestId, procedure: path, type },
      "settings procedure failed",
    );
  }
  return result;
});

const READS: ReadonlySet<Permission> = new Set([
  "apiKey:read",
  "webhook:read",
  "usage:read",
  "audit:read",
  "customField:read",
]);

function forbidden(message: string, cause?: Error): TRPCError {
  return new TRPCError({ code: "FORBIDDEN", message, cause });
}

/**
 * The one check behind every settings action (the pages use {@link can} only to hide what a role cannot do):
 * - the member's role must hold `permission` (and `allowed`, a rule about the target such as "never an owner's
 *   role", must hold); otherwise 403 in the page's words and an `action.refused` entry in the audit trail;
 * - a change (any permission but a read) by an owner or admin of an organisation that requires two-factor needs a
 *   session that proved a second factor; otherwise 403 pointing to the security page (set one up) or the
 *   confirmation page (prove it), also recorded;
 * - `stepUp` actions (keys, webhook secrets, roles, ownership, deletion) need a sign-in or a confirmation within 15
 *   minutes, with the second factor when the member has one; `stepUp: "strongest"` (turning the two-factor
 *   requirement off) needs it with the member's strongest factor ({@link mayChangeSignInFactors}); otherwise 403 with
 *   {@link StepUpRequiredError} as cause (the pages ask to confirm).
 * @throws TRPCError `FORBIDDEN` (403) as above.
 */
export async function authorize(
  member: SignedInMember,
  permission: Permission,
  options: {
    attempted: string;
    target?: string | null;
    stepUp?: boolean | "strongest";
    allowed?: boolean;
    reason?: string;
  } = {
    attempted: permission,
  },
): Promise<void> {
  if (!can(member.role, permission) || options.allowed === false) {
    const message =
      options.allowed === false && can(member.role, permission) && options.reason
        ? options.reason
        : refusalMessage(member.role, permission, member.org.name);
    await recordRefusal(member.org.id, actorOf(member), options.attempted, message, options.target);
    throw forbidden(message);
  }
  const needed = READS.has(permission) ? null : secondFactorNeeded(member);
  if (needed) {
    const message =
      needed === "set-up"
        ? `${member.org.name} requires two-factor authentication for owners and admins: set up an authenticator app or a passkey on the security page first`
        : `${member.org.name} requires two-factor authentication for owners and admins: confirm with your authenticator app or passkey first (this session signed in with a password only)`;
    await recordRefusal(member.org.id, actorOf(member), options.attempted, message, options.target);
    throw forbidden(message);
  }
  if (options.stepUp === "strongest") requireStrongestFactor(member);
  else if (options.stepUp && !isRecentlyAuthenticated(member)) {
    const cause = new StepUpRequiredError();
    throw forbidden(cause.message, cause);
  }
}

function requireStrongestFactor(member: SignedInMember): void {
  if (mayChangeSignInFactors(member)) return;
  const cause = factorStepUpRequired(member);
  throw forbidden(cause.message, cause);
}

/**
 * A procedure for a signed-in member of an organisation: resolves the session (from the database for every request,
 * so a removed member or a changed role counts from the next one) and its membership into `ctx.member`. Text PostgreSQL cannot
 * store is refused before the procedure runs. ApiErrors thrown by services become tRPC errors with the matching
 * status.
 * @throws TRPCError `UNAUTHORIZED` (401) without a valid session; `FORBIDDEN` (403) when the session's user is not (or
 *         no longer) a member of the organisation; `UNPROCESSABLE_CONTENT` (422) for unstorable text.
 */
export const memberProcedure = settingsProcedure.use(async ({ ctx, next, getRawInput }) => {
  const state = await (ctx.session ?? resolveSettingsSession(ctx.request));
  if (state.state === "signed-out")
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to use the settings" });
  if (state.state === "no-membership") {
    throw forbidden(
      state.ssoRequired
        ? `${state.ssoRequired.orgName} requires single sign-on: sign in through its identity provider`
        : "You are not a member of this organisation any more: ask an owner or admin to invite you again",
    );
  }
  const unstorable = findUnstorableText(await getRawInput());
  if (unstorable) {
    const cause = new ApiError("validation_error", `${unstorable.path.join(".") || "input"} ${unstorable.message}`, {
      details: [unstorable],
    });
    throw new TRPCError({ code: TRPC_CODES.validation_error, message: cause.message, cause });
  }
  const { state: _state, ...member } = state;
  return next({ ctx: { member: member as SignedInMember } });
});

/**
 * A {@link memberProcedure} whose every call must pass {@link authorize} for `permission` first (with `stepUp` for
 * the actions that need a recent sign-in). Procedures whose permission depends on the record (a live or a test key,
 * an owner's membership) use {@link memberProcedure} with {@link authorize} once the record is read.
 */
export function orgProcedure(permission: Permission, options: { stepUp?: boolean } = {}) {
  return memberProcedure.use(async ({ ctx, next, path }) => {
    await authorize(ctx.member, permission, { attempted: path, stepUp: options.stepUp });
    return next();
  });
}

/**
 * A {@link memberProcedure} that changes how the member signs in (setting up or removing the authenticator app, new
 * backup codes, removing a passkey; adding one is the same check on `/api/auth/passkey/…`): it runs only after a
 * sign-in or confirmation within 15 minutes with the member's strongest factor ({@link mayChangeSignInFactors}),
 * whatever the organisation's two-factor requirement asks (a member told to set a factor up must be able to).
 * @throws TRPCError `FORBIDDEN` (403) with a {@link StepUpRequiredError} cause naming the factor to confirm with.
 */
export const signInFactorProcedure = memberProcedure.use(async ({ ctx, next }) => {
  requireStrongestFactor(ctx.member);
  return next();
});
