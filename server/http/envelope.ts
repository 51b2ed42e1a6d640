import { hash } from "node:crypto";
import { randomChunk } from "../db/ids";
import {
  type ApiError,
  boundedDetails,
  ERROR_CODES,
  ERROR_LIMITS,
  type ErrorCode,
  type ErrorDetail,
  truncateText,
} from "../errors";
import type { Reply } from "./exchange";

/** A new request id, `req_` followed by 24 hex characters (docs/api-contract.md §2.1). */
export function newRequestId(): string {
  return `req_${randomChunk(12).toString("hex")}`;
}

/**
 * Where `docsUrl` of an error code points: the error reference page, anchored at the code (docs/api-contract.md §2.1).
 */
export function docsUrlFor(origin: string, code: ErrorCode): string {
  return `${origin}/docs/errors#${code}`;
}

function jsonHeaders(requestId: string, extra?: Record<string, string>): Record<string, string> {
  return {
    "Content-Type": "application/json; charset=utf-8",
    "X-Request-Id": requestId,
    "Cache-Control": "no-store",
    ...extra,
  };
}

/**
 * The entity tag of an answer's `data` (docs/api-contract.md §4.13): a strong validator, the quoted first 27 base64url
 * characters of the SHA-256 of its JSON text, so equal representations have equal tags on every instance.
 */
export function entityTag(dataText: string): string {
  // The one-shot digest: no Hash object per answer, which is most of a short body's hashing cost.
  return `"${hash("sha256", dataText, "base64url").slice(0, 27)}"`;
}

/**
 * A success envelope (docs/api-contract.md §2.1), serialised once:
 * `{ success: true, data, hasMore?, nextCursor?, requestId, timestamp }` with `X-Request-Id`. `page` is given for
 * paginated lists only; every other answer carries `ETag`, the {@link entityTag} of its `data` (conditional requests).
 */
export function successReply(
  requestId: string,
  data: unknown,
  status = 200,
  page?: { hasMore: boolean; nextCursor: string | null },
): Reply {
  // The data is serialised once, for the body and for its tag; the envelope around it is assembled as text.
  const dataText = JSON.stringify(data) ?? "null";
  const pageText = page ? `,"hasMore":${page.hasMore},"nextCursor":${JSON.stringify(page.nextCursor)}` : "";
  const body = `{"success":true,"data":${dataText}${pageText},"requestId":${JSON.stringify(requestId)},"timestamp":"${new Date().toISOString()}"}`;
  return {
    status,
    headers: jsonHeaders(requestId, page ? undefined : { ETag: entityTag(dataText) }),
    body,
  };
}

/**
 * An error envelope (docs/api-contract.md §2.1, §7), serialised once:
 * `{ success: false, error: { code, message, docsUrl, details? }, requestId, timestamp }` with the code's status unless
 * `status` overrides it (only `GET /status`: 503). The message and details are cut to {@link ERROR_LIMITS}, the bounds
 * the OpenAPI document declares.
 */
export function errorReply(
  requestId: string,
  origin: string,
  code: ErrorCode,
  message: string,
  options: { details?: ErrorDetail[]; status?: number; headers?: Record<string, string> } = {},
): Reply {
  const error = {
    code,
    message: truncateText(message, ERROR_LIMITS.message),
    docsUrl: docsUrlFor(origin, code),
    ...(options.details ? { details: boundedDetails(options.details) } : {}),
  };
  const body = { success: false, error, requestId, timestamp: new Date().toISOString() };
  return {
    status: options.status ?? ERROR_CODES[code].status,
    headers: jsonHeaders(requestId, options.headers),
    body: JSON.stringify(body),
    errorCode: code,
  };
}

/** The error envelope of an {@link ApiError}: its code, message, details, status and extra headers. */
export function apiErrorReply(requestId: string, origin: string, error: ApiError): Reply {
  return errorReply(requestId, origin, error.code, error.message, {
    details: error.details,
    status: error.status,
    headers: error.headers,
  });
}
