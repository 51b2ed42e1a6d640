/**
 * Error codes of docs/api-contract.md §7 with their HTTP statuses and reference text. The one table every layer uses:
 * services throw {@link ApiError} with a code, the REST facade only translates (docs/architecture.md,
 * "Layers and the request pipeline").
 */
export const ERROR_CODES = {
  bad_request: {
    status: 400,
    title: "Bad request",
    description:
      "The request cannot be read as sent: a malformed path parameter, malformed percent-encoding or a . or .. segment in the path, a malformed Idempotency-Key, more than one Authorization header, a cursor that is neither a record id of the list nor a cursor the service made (on any list or the feed), or the id of a record the list does not have (deleted, or another organisation's), If-Match on an operation that does not take it, an If-Match or If-None-Match over 8,192 characters, or a request that is not valid HTTP/1.1. Correct the request; repeating it unchanged gets the same answer.",
  },
  invalid_json: {
    status: 400,
    title: "Invalid JSON",
    description: "The body is not UTF-8 or not JSON. Send a JSON object with Content-Type: application/json.",
  },
  unauthorized: {
    status: 401,
    title: "Unauthorized",
    description:
      "The API key is missing, malformed, unknown, expired or revoked. Send Authorization: Bearer msp_live_… or msp_test_… with a key from the settings.",
  },
  insufficient_scope: {
    status: 403,
    title: "Insufficient scope",
    description:
      "The API key lacks the scope the operation requires, or a deprecated scope was asked for when creating a key, or a test key asked for an outbound webhook (a test event or a redelivery), which only live keys send. Each operation in the API reference names its scope; use a key that has it (a live key for webhooks).",
  },
  not_found: {
    status: 404,
    title: "Not found",
    description:
      "The record does not exist or belongs to another organisation, or there is no operation at this path. Check the id and the path.",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    description: "The path exists but not with this HTTP method. The Allow header lists the methods it takes.",
  },
  validation_error: {
    status: 422,
    title: "Validation error",
    description:
      "The body or query fails validation: unknown, read-only, missing or malformed fields, unknown references, repeated keys or parameters, or, with the request header Prefer: handling=strict, a sort pair the list cannot sort by (without it, such a pair is ignored and named in the Sort-Ignored header). error.details lists each issue as a path (an array of strings) and a message.",
  },
  idempotency_conflict: {
    status: 422,
    title: "Idempotency conflict",
    description:
      "The Idempotency-Key was used within the last 24 hours for a different method, path or body, or its stored answer carried a webhook signing secret that has been rotated since. Use a new key for a new request.",
  },
  conflict: {
    status: 409,
    title: "Conflict",
    description:
      "The state refuses the operation: the webhook endpoint is disabled, a replay of it is already running, or the records it writes were being changed by another request at the same moment so that the database had to roll one of them back (a deadlock, retried by the service before answering). The message says which: enable the endpoint, wait for the replay to end (or cancel it), or retry after the seconds in Retry-After.",
  },
  idempotency_in_progress: {
    status: 409,
    title: "Idempotency key in progress",
    description:
      "A request with the same Idempotency-Key is still running. Retry after the seconds in Retry-After (1): the retry gets the first request's answer, and the operation runs only once.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    description:
      "The body exceeds 1 MiB (1,048,576 bytes) or nests JSON deeper than 32 levels. Split bulk requests (at most 500 items each).",
  },
  headers_too_large: {
    status: 431,
    title: "Request Header Fields Too Large",
    description:
      "The request line and headers together exceed 16 KB, usually because of a very long query. Shorten the query or send fewer headers.",
  },
  precondition_failed: {
    status: 412,
    title: "Precondition failed",
    description:
      "The If-Match header of a PATCH or DELETE names a version (ETag) the record no longer has: it changed since you read it, and nothing was changed now. The answer's ETag header is the current version: GET the record again, reapply your change and retry with that ETag.",
  },
  cursor_expired: {
    status: 410,
    title: "Cursor expired",
    description:
      "The events feed cursor is older than the feed's retention (30 days by default), so events after it may be gone. List the resources again, then follow the feed from its start.",
  },
  rate_limited: {
    status: 429,
    title: "Rate limited",
    description:
      "The API key's or the organisation's requests in the last 60 seconds reached the plan's limit (requests without a valid key count per client address). Wait the seconds in Retry-After; the X-RateLimit-Remaining header of every answer shows what is left.",
  },
  timeout: {
    status: 503,
    title: "Timeout",
    description:
      "The request ran out of its time: one of its database statements ran longer than the budget of a request (5 seconds by default) and the database cancelled it, or the service could not get a database connection in time. Its changes were rolled back. Retry after the seconds in Retry-After; if a search or a filtered list times out again, narrow it (more selective filters, shorter contains values, a smaller limit).",
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    description:
      "The request failed on the service's side, and the answer does not say why. Retry with exponential backoff, and quote the requestId if it persists. GET /status answers 503 with this code while the service cannot work.",
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

/** One of the error codes of docs/api-contract.md §7. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * One validation issue: `path` from the root of the body or query (array of strings), and a message
 * (docs/api-contract.md §2.1).
 */
export interface ErrorDetail {
  path: string[];
  message: string;
}

/**
 * Bounds of an error's `message` and `details` as sent and as the OpenAPI document declares them (docs/architecture.md,
 * "The REST facade"): at most 1,000 details of at most 32 path segments, each segment at most 256 characters, each
 * message at most 1,000 characters. Details can name what the caller sent (unknown field names, values), so a request
 * can never make its own error answer unbounded.
 */
export const ERROR_LIMITS = { message: 1_000, details: 1_000, pathSegments: 32, segment: 256 } as const;

/** `text` cut to at most `max` characters, the last one "…" when it was cut (docs/architecture.md, "The REST facade"). */
export function truncateText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * `details` within {@link ERROR_LIMITS}: the first 1,000, each path cut to its first 32 segments and every segment and
 * message to its limit. The one place answers bound them (the error envelope and per-item bulk errors;
 * docs/api-contract.md §2.1, docs/architecture.md, "The REST facade").
 */
export function boundedDetails(details: readonly ErrorDetail[]): ErrorDetail[] {
  return details.slice(0, ERROR_LIMITS.details).map((detail) => ({
    path: detail.path.slice(0, ERROR_LIMITS.pathSegments).map((part) => truncateText(part, ERROR_LIMITS.segment)),
    message: truncateText(detail.message, ERROR_LIMITS.message),
  }));
}

/**
 * The application's one error type. Thrown by services and procedures with a code of docs/api-contract.md §7; the REST
 * facade turns it into the error envelope with the code's HTTP status (see {@link ERROR_CODES}).
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;
  /**
   * HTTP status: the code's (docs/api-contract.md §7) unless overridden, which only `GET /status` does (503,
   * docs/api-contract.md §4.8).
   */
  readonly status: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; status?: number } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.details = options.details;
    this.headers = options.headers;
    this.status = options.status ?? ERROR_CODES[code].status;
  }
}

/** 404 `not_found` for a record missing or owned by another organisation (docs/api-contract.md §1, §7). */
export function notFound(resource: string, id: string): ApiError {
  return new ApiError("not_found", `${resource} ${id} not found`);
}
