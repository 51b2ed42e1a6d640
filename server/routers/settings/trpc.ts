import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { ZodError } from "zod";
import { ApiError, type ErrorCode } from "../../errors";
import { findUnstorableText } from "../../schemas/storable";
import { resolveSession, type SessionPrincipal } from "../../services/sessions";

/**
 * Context of the settings router (DESIGN.md §1, "settings UI" door): the raw session token from the cookie. Built by
 * `app/api/trpc/[trpc]/route.ts` from the request, or by the server-rendered pages from `cookies()`.
 */
export interface SettingsContext {
  sessionToken: string | null;
}

// ApiError codes (spec §7) as tRPC codes, so the HTTP door answers with the same statuses as the REST API.
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
  payload_too_large: "PAYLOAD_TOO_LARGE",
  headers_too_large: "BAD_REQUEST",
  // tRPC has no 410; the settings door never reads the events feed.
  cursor_expired: "BAD_REQUEST",
  precondition_failed: "PRECONDITION_FAILED",
  rate_limited: "TOO_MANY_REQUESTS",
  internal_error: "INTERNAL_SERVER_ERROR",
};

/**
 * The message a settings form shows for an error thrown by a settings procedure: the ApiError's message with the reason
 * of each detail, the zod issues of a refused input ("name: Too small…"), or a generic text for anything unexpected
 * (never internals).
 */
export function settingsErrorMessage(error: unknown): string {
  const cause = error instanceof TRPCError ? (error.cause ?? error) : error;
  if (cause instanceof ApiError) {
    // Every refusal names its reason (issue #11 B): the details, unless the message already carries them.
    const reasons = (cause.details ?? [])
      .filter((detail) => !cause.message.includes(detail.message))
      .map((detail) => `${detail.path.join(".") || "input"}: ${detail.message}`);
    return reasons.length > 0 ? `${cause.message}: ${reasons.join("; ")}` : cause.message;
  }
  if (cause instanceof ZodError) {
    return cause.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`).join("; ");
  }
  if (error instanceof TRPCError && error.code === "UNAUTHORIZED") return "Your session has ended: sign in again";
  return "Something went wrong; please try again";
}

const t = initTRPC.context<SettingsContext>().create({
  errorFormatter({ shape, error }) {
    const apiError = error.cause instanceof ApiError ? error.cause : null;
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
 * A procedure for a signed-in settings user (DESIGN.md §1, §7): resolves the session cookie's token and adds
 * `ctx.session` (user, `orgId`, organisation name). Procedures pass `ctx.session.orgId` to the services, so a user
 * only ever sees their own organisation. ApiErrors thrown by services become tRPC errors with the matching status.
 * Text PostgreSQL cannot store (NUL, a lone surrogate) is refused before the procedure runs (issue #11 C).
 * @throws TRPCError `UNAUTHORIZED` (401) without a valid, unexpired session; `UNPROCESSABLE_CONTENT` (422) for
 *         unstorable text.
 */
export const sessionProcedure = t.procedure.use(async ({ ctx, next, getRawInput }) => {
  const session: SessionPrincipal | null = await resolveSession(ctx.sessionToken);
  if (!session) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to use the settings" });
  const unstorable = findUnstorableText(await getRawInput());
  if (unstorable) {
    const cause = new ApiError("validation_error", `${unstorable.path.join(".") || "input"} ${unstorable.message}`, {
      details: [unstorable],
    });
    throw new TRPCError({ code: TRPC_CODES.validation_error, message: cause.message, cause });
  }
  const result = await next({ ctx: { session } });
  if (!result.ok && result.error.cause instanceof ApiError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODES[cause.code], message: cause.message, cause });
  }
  return result;
});
