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
      "A path parameter is missing or malformed, or a header such as Idempotency-Key or a query value such as cursor is not usable.",
  },
  invalid_json: {
    status: 400,
    title: "Invalid JSON",
    description: "The request body is not valid JSON. Send a JSON object with Content-Type: application/json.",
  },
  unauthorized: {
    status: 401,
    title: "Unauthorized",
    description:
      "The Authorization header is missing, or the API key is unknown, malformed or revoked. Send Authorization: Bearer msp_live_… or msp_test_….",
  },
  insufficient_scope: {
    status: 403,
    title: "Insufficient scope",
    description:
      "The API key lacks the scope the endpoint requires. Each operation in the OpenAPI document names its scope; create a key with that scope.",
  },
  not_found: {
    status: 404,
    title: "Not found",
    description: "The record does not exist or belongs to another organisation, or no endpoint exists at this path.",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    description:
      "The endpoint exists but does not support this HTTP method. The Allow header lists the methods it supports.",
  },
  validation_error: {
    status: 422,
    title: "Validation error",
    description:
      "The body or query fails schema validation. error.details lists each issue as a path (array of strings) and a message.",
  },
  idempotency_conflict: {
    status: 422,
    title: "Idempotency conflict",
    description:
      "The Idempotency-Key was already used with a different request body within 24 hours. Use a new key for a new request.",
  },
  idempotency_in_progress: {
    status: 409,
    title: "Idempotency key in progress",
    description:
      "A request with the same Idempotency-Key is still running (IETF draft-ietf-httpapi-idempotency-key-header). Retry after it completes, per Retry-After; the retry replays its response. An extension: not in the contract's error table.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    description:
      "The request body exceeds 1 MiB (1,048,576 bytes) or nests JSON deeper than 32 levels. Split bulk requests (at most 500 items). An extension: not in the contract's error table.",
  },
  headers_too_large: {
    status: 431,
    title: "Request Header Fields Too Large",
    description:
      "The request line and headers together exceed 16 KB (a very long URL, usually a query). Shorten the query or send fewer headers. An extension: not in the contract's error table.",
  },
  precondition_failed: {
    status: 412,
    title: "Precondition failed",
    description:
      "The If-Match header of a PATCH or DELETE names a version (ETag) the record no longer has: someone changed it since you read it. GET the record again, reapply your change and retry with the new ETag. An extension: not in the contract's error table.",
  },
  cursor_expired: {
    status: 410,
    title: "Cursor expired",
    description:
      "The events feed cursor points before the retention period (30 days by default), so events after it may have been removed. Resynchronise: list the resources again, then follow the feed from its start. An extension: not in the contract's error table.",
  },
  rate_limited: {
    status: 429,
    title: "Rate limited",
    description:
      "A per-key or organisation-wide sliding window is exhausted. Wait the number of seconds in the Retry-After header.",
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    description:
      "An unexpected error occurred; nothing internal is disclosed. Retry with exponential backoff and quote the requestId if it persists.",
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
