// How an MCP tool reaches the service (docs/architecture.md, "The MCP server"): as a REST operation of `/api/v1`, run
// in this process through the facade's own pipeline (`handleInProcessRequest`), so that scopes, tenancy, validation,
// budgets, idempotency, preconditions, events and webhooks are those of the REST API and nothing is written twice.
import type { ApiRequest } from "../http/exchange";
import { API_PREFIX } from "../http/parse";
import { handleInProcessRequest } from "../http/pipeline";
import type { ApiKeyPrincipal } from "../platform/api-keys/service";

/** Who calls, as the MCP endpoint authenticated them: the principal, the client's address and name. */
export interface McpCaller {
  principal: ApiKeyPrincipal;
  /** The client address under `TRUST_PROXY` (server/http/origin.ts). */
  clientIp: string | null;
  /** The client's name and version as it declared them (`claude-code/2.1.0`), else its `User-Agent`; ≤ 512 characters. */
  clientName: string | null;
}

/** One REST operation: method, path below `/api/v1` (`/accounts/c1`), query, JSON body and request headers. */
export interface ApiCall {
  method: "GET" | "POST" | "PATCH";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** `Idempotency-Key` (docs/api-contract.md §8.4). */
  idempotencyKey?: string;
  /** `If-Match` (docs/api-contract.md §4.13). */
  ifMatch?: string;
}

/** The error of a refused operation, as the envelope of docs/api-contract.md §7 gives it. */
export interface ApiRefusal {
  code: string;
  message: string;
  details?: unknown[];
  /** Seconds to wait before retrying (429 `rate_limited`). */
  retryAfterSeconds?: number;
}

/** What an operation answered: its HTTP status and either the envelope's data or its error. */
export type ApiAnswer =
  | { ok: true; status: number; data: unknown; hasMore?: boolean; nextCursor?: string | null; etag?: string }
  | { ok: false; status: number; error: ApiRefusal };

interface Envelope {
  data?: unknown;
  hasMore?: boolean;
  nextCursor?: string | null;
  error?: { code: string; message: string; details?: unknown[] };
}

/**
 * Runs one REST operation as `caller` through the facade's pipeline without its identification and rate-limit steps
 * (the MCP endpoint did both once for the tool call) and without a request-log row (the tool call gets one).
 * @param requestId the tool call's request id (`req_<24 hex>`), which the operation's log line and idempotency record
 *        carry.
 * @returns the status and data, or the status and error of the envelope; never throws for a refusal.
 */
export async function callApi(caller: McpCaller, requestId: string, call: ApiCall): Promise<ApiAnswer> {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(call.query ?? {})) {
    if (value !== undefined) query.set(name, String(value));
  }
  // A sort the list cannot apply is an error an agent can correct, not an order silently ignored (§4.9.2).
  const headers: Record<string, string> = { "content-type": "application/json", prefer: "handling=strict" };
  if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
  if (call.ifMatch !== undefined) headers["if-match"] = call.ifMatch;
  if (caller.clientName) headers["user-agent"] = caller.clientName;
  const body = call.body === undefined ? null : new TextEncoder().encode(JSON.stringify(call.body));
  const request: ApiRequest = {
    method: call.method,
    target: `${API_PREFIX}${call.path}${query.size > 0 ? `?${query}` : ""}`,
    header: (name) => headers[name],
    repeated: () => false,
    readBody: async (limit) => (body && body.byteLength > limit ? null : (body ?? new Uint8Array())),
    // The address the endpoint computed already: a socket address the pipeline takes as it is.
    socketAddress: caller.clientIp,
    encrypted: false,
    inProcess: { principal: caller.principal, requestId },
  };
  const reply = await handleInProcessRequest(request);
  const envelope = (reply.body ? JSON.parse(reply.body) : {}) as Envelope;
  if (reply.status >= 400) {
    const error: ApiRefusal = {
      code: envelope.error?.code ?? "internal_error",
      message: envelope.error?.message ?? `HTTP ${reply.status}`,
    };
    if (envelope.error?.details?.length) error.details = envelope.error.details;
    const retryAfter = Number(reply.headers["Retry-After"]);
    if (Number.isFinite(retryAfter) && retryAfter > 0) error.retryAfterSeconds = retryAfter;
    return { ok: false, status: reply.status, error };
  }
  const answer: ApiAnswer = { ok: true, status: reply.status, data: envelope.data };
  if (envelope.hasMore !== undefined) {
    answer.hasMore = envelope.hasMore;
    answer.nextCursor = envelope.nextCursor ?? null;
  }
  if (reply.headers.ETag) answer.etag = reply.headers.ETag;
  return answer;
}
