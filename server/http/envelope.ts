import { randomBytes } from "node:crypto";
import { ERROR_CODES, type ErrorCode, type ErrorDetail } from "../errors";

/** A new request id, `req_` followed by 24 hex characters (spec §2.1). */
export function newRequestId(): string {
  return `req_${randomBytes(12).toString("hex")}`;
}

/** Where `docsUrl` of an error code points: the error reference page, anchored at the code (spec §2.1). */
export function docsUrlFor(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/docs/errors#${code}`;
}

/** Internal header carrying the error code from the envelope builder to the audit log; removed before sending. */
export const ERROR_CODE_HEADER = "x-internal-error-code";

/** Context every envelope needs: the request id and the base URL for documentation links. */
export interface EnvelopeContext {
  requestId: string;
  baseUrl: string;
}

function jsonResponse(body: unknown, status: number, ctx: EnvelopeContext, headers: HeadersInit = {}): Response {
  const response = new Response(JSON.stringify(body), { status, headers });
  response.headers.set("Content-Type", "application/json; charset=utf-8");
  response.headers.set("X-Request-Id", ctx.requestId);
  response.headers.set("Cache-Control", "no-store");
  return response;
}

/**
 * A success envelope (spec §2.1): `{ success: true, data, hasMore?, nextCursor?, requestId, timestamp }` with
 * `X-Request-Id`. `page` is given for paginated lists only.
 */
export function successResponse(
  ctx: EnvelopeContext,
  data: unknown,
  status = 200,
  page?: { hasMore: boolean; nextCursor: string | null },
): Response {
  const body = { success: true, data, ...page, requestId: ctx.requestId, timestamp: new Date().toISOString() };
  return jsonResponse(body, status, ctx);
}

/**
 * An error envelope (spec §2.1, §7): `{ success: false, error: { code, message, docsUrl, details? }, requestId,
 * timestamp }` with the code's status unless `status` overrides it.
 */
export function errorResponse(
  ctx: EnvelopeContext,
  code: ErrorCode,
  message: string,
  options: { details?: ErrorDetail[]; status?: number; headers?: HeadersInit } = {},
): Response {
  const error = {
    code,
    message,
    docsUrl: docsUrlFor(ctx.baseUrl, code),
    ...(options.details ? { details: options.details } : {}),
  };
  const body = { success: false, error, requestId: ctx.requestId, timestamp: new Date().toISOString() };
  const response = jsonResponse(body, options.status ?? ERROR_CODES[code].status, ctx, options.headers);
  response.headers.set(ERROR_CODE_HEADER, code);
  return response;
}
