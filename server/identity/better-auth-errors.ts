// The one translation of better-auth's refusals into ours (docs/architecture.md, "Settings: sign-in, team and roles"):
// every better-auth call of the services and pages goes through `viaAuth`, so a wrong password, a wrong code, an
// existing member or the last owner reaches the page and the procedure as its documented status and words
// (docs/api-contract.md §5.10), never as a 500.
import { ApiError, type ErrorCode } from "../errors";

/** How better-auth says no: a 4xx `APIError` (better-call) with a `status` name, a `statusCode` and `body.code`. */
export interface AuthRefusal {
  status?: unknown;
  statusCode?: unknown;
  message?: unknown;
  body?: { code?: unknown; message?: unknown } | null;
}

const STATUS_NAMES: Record<string, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  UNPROCESSABLE_ENTITY: 422,
  TOO_MANY_REQUESTS: 429,
};

/**
 * The HTTP status of a better-auth refusal, or null when `error` is not one. Duck-typed on `statusCode`/`status` and
 * `body`, never `instanceof APIError`: a production build can hold two copies of `@better-auth/core` (Next.js bundles
 * its own beside the server's), whose classes differ.
 */
export function authRefusalStatus(error: unknown): number | null {
  if (typeof error !== "object" || error === null || !("body" in error || "statusCode" in error)) return null;
  const refusal = error as AuthRefusal;
  const status =
    typeof refusal.statusCode === "number"
      ? refusal.statusCode
      : typeof refusal.status === "number"
        ? refusal.status
        : typeof refusal.status === "string"
          ? (STATUS_NAMES[refusal.status] ?? null)
          : null;
  return status !== null && status >= 400 && status < 500 ? status : null;
}

/** better-auth's code of a refusal (`INVALID_PASSWORD`, `USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION`, …), or "". */
export function authRefusalCode(error: unknown): string {
  const code = (error as AuthRefusal | null)?.body?.code;
  return typeof code === "string" ? code : "";
}

interface Words {
  code: ErrorCode;
  message: string;
  /** The form field the refusal is about. */
  field?: string;
}

const WRONG_PASSWORD: Words = { code: "validation_error", message: "The password is not right", field: "password" };
const WRONG_CODE: Words = {
  code: "validation_error",
  message: "The code is not right: enter the current one from your app",
  field: "code",
};
const LAST_OWNER: Words = { code: "validation_error", message: "An organisation always keeps at least one owner" };
const SIGN_IN_AGAIN: Words = { code: "unauthorized", message: "The sign-in took too long or was ended: sign in again" };

/** Our words for better-auth's codes (and our plugin's), by `body.code`. */
const WORDS: Record<string, Words> = {
  INVALID_EMAIL_OR_PASSWORD: { code: "unauthorized", message: "Email or password is incorrect" },
  INVALID_PASSWORD: WRONG_PASSWORD,
  CREDENTIAL_ACCOUNT_NOT_FOUND: WRONG_PASSWORD,
  INVALID_EMAIL: { code: "validation_error", message: "Email must be an email address", field: "email" },
  PASSWORD_TOO_SHORT: {
    code: "validation_error",
    message: "Password must be at least 10 characters",
    field: "password",
  },
  PASSWORD_TOO_LONG: {
    code: "validation_error",
    message: "Password must be at most 128 characters",
    field: "password",
  },
  INVALID_TOKEN: {
    code: "validation_error",
    message: "This reset link is not valid any more: ask for a new one",
    field: "token",
  },
  INVALID_CODE: WRONG_CODE,
  CODE_ALREADY_USED: {
    code: "validation_error",
    message: "This code was already used: wait for the next one from your app",
    field: "code",
  },
  INVALID_BACKUP_CODE: {
    code: "validation_error",
    message: "This backup code is not right or was already used",
    field: "code",
  },
  TOTP_NOT_ENABLED: { code: "validation_error", message: "No authenticator app is set up", field: "code" },
  TWO_FACTOR_NOT_ENABLED: { code: "validation_error", message: "No authenticator app is set up" },
  TOTP_ALREADY_ENABLED: {
    code: "validation_error",
    message: "An authenticator app is already set up",
    field: "password",
  },
  INVALID_TWO_FACTOR_COOKIE: SIGN_IN_AGAIN,
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: { code: "rate_limited", message: "Too many wrong codes: sign in again" },
  ACCOUNT_TEMPORARILY_LOCKED: {
    code: "rate_limited",
    message: "Too many wrong codes for this account: wait 15 minutes and try again",
  },
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: {
    code: "validation_error",
    message: "This person is already a member",
    field: "email",
  },
  INVITATION_LIMIT_REACHED: {
    code: "validation_error",
    message: "The organisation has 100 pending invitations: revoke some first",
  },
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: {
    code: "validation_error",
    message: "The organisation has reached 100 members",
  },
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: LAST_OWNER,
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER: LAST_OWNER,
  INVITATION_NOT_FOUND: { code: "not_found", message: "This invitation was revoked, accepted or has expired" },
  INVITATION_WITHDRAWN: {
    code: "not_found",
    message: "This invitation was withdrawn: whoever sent it can no longer give that role. Ask for a new one",
  },
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: {
    code: "insufficient_scope",
    message: "This invitation is for another email address",
  },
  MEMBER_NOT_FOUND: { code: "not_found", message: "Member not found" },
  INVITATION_REQUIRED: {
    code: "insufficient_scope",
    message: "Sign-up needs an invitation: ask an owner or admin of your organisation to invite you",
  },
  PASSKEY_REQUIRED: {
    code: "insufficient_scope",
    message: "You have a passkey: confirm with it, not with your password",
  },
};

const BY_STATUS: Record<number, ErrorCode> = {
  401: "unauthorized",
  403: "insufficient_scope",
  404: "not_found",
  429: "rate_limited",
};

/**
 * Our {@link ApiError} for a better-auth refusal: its code's words from the table above (401 sign-in refused,
 * 403 not allowed, 404 not found, 422 on the field, 429 too many attempts), else its status with better-auth's own
 * message (400 becomes 422). Null when `error` is no refusal (a 5xx, a bug): the caller lets it through as an internal
 * error, which the settings procedures log.
 */
export function authRefusal(error: unknown): ApiError | null {
  const status = authRefusalStatus(error);
  if (status === null) return null;
  const code = authRefusalCode(error);
  const words = WORDS[code];
  // Without words of ours (our plugin's 429 names the wait itself), better-auth's own message.
  const own = (error as AuthRefusal).body?.message ?? (error as AuthRefusal).message;
  const message = words?.message ?? (typeof own === "string" && own ? own : "The request was refused");
  const apiCode = words?.code ?? BY_STATUS[status] ?? "validation_error";
  return new ApiError(apiCode, message, {
    details: words?.field ? [{ path: [words.field], message }] : undefined,
  });
}

/**
 * Runs a better-auth call and turns its refusal into our {@link ApiError} ({@link authRefusal}); anything else is
 * rethrown as it is.
 * @throws ApiError `unauthorized` (401), `insufficient_scope` (403), `not_found` (404), `validation_error` (422) or
 *         `rate_limited` (429) for a refusal.
 */
export async function viaAuth<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw authRefusal(error) ?? error;
  }
}
