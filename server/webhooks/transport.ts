import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { BlockedAddressError, blockedReason, guardedLookup } from "./ssrf";

/** Time allowed for one delivery attempt, connection to end of the response head (ms). Longer counts as a failure. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/**
 * Characters of the receiver's response body kept with an attempt (docs/architecture.md, "Webhooks and the outbox":
 * bodies truncated).
 */
export const RESPONSE_BODY_LIMIT = 2_048;
// Bytes read before giving up on the rest of the body: enough for 2,048 characters of multi-byte UTF-8.
const RESPONSE_BYTES_LIMIT = RESPONSE_BODY_LIMIT * 4;

/**
 * How an attempt ended: `success` (2xx), `http_error` (any other status, redirects included), `timeout`,
 * `network_error` (DNS, refused or reset connection, TLS) or `refused` (not sent: an invalid URL or an address the
 * SSRF filter blocks). Source: docs/architecture.md, "Observability".
 */
export type PostResult = "success" | "http_error" | "timeout" | "network_error" | "refused";

/** What one POST to a receiver produced. */
export interface PostOutcome {
  /** How it ended, in one word (for metrics and traces). */
  result: PostResult;
  /** HTTP status of the answer; null when none came (refused by the SSRF filter, DNS, connection error, timeout). */
  status: number | null;
  /** First 2,048 characters of the response body; null when there was no response. */
  body: string | null;
  /** Why the attempt failed in words (network error, timeout, non-2xx status); null on success. */
  error: string | null;
  /** True exactly for a 2xx answer: 3xx (redirects are never followed), 4xx, 5xx and no answer are failures. */
  success: boolean;
  /** Wall time of the attempt (ms). */
  durationMs: number;
}

function resultOf(error: unknown): PostResult {
  if (error instanceof BlockedAddressError) return "refused";
  return (error as { code?: string }).code === "WEBHOOK_TIMEOUT" ? "timeout" : "network_error";
}

function explainFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof BlockedAddressError) return error.message;
  const code = (error as { code?: string }).code;
  if (code === "WEBHOOK_TIMEOUT") return `timed out after ${timeoutMs / 1000} s`;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host name not found";
  if (code === "ECONNRESET") return "connection reset";
  if (code?.startsWith("ERR_TLS") || code?.includes("CERT")) return `TLS error (${code})`;
  return error instanceof Error ? error.message.slice(0, 200) : "request failed";
}

/**
 * POSTs `body` to `url` through the SSRF filter (docs/architecture.md, "Webhooks and the outbox"): only absolute
 * http(s) URLs; IP literals checked directly, host names resolved and checked by {@link guardedLookup} with the socket
 * pinned to the checked address; no connection reuse (each attempt resolves and checks afresh); redirects are not
 * followed; at most `timeoutMs` (default {@link WEBHOOK_TIMEOUT_MS}) for the whole attempt; the response body is read
 * up to 2,048 characters. Never throws: every failure is reported in the outcome.
 */
export function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowLoopback: boolean; timeoutMs?: number },
): Promise<PostOutcome> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string, result: PostResult = "refused"): PostOutcome => ({
    result,
    status: null,
    body: null,
    error,
    success: false,
    durationMs: elapsed(),
  });

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(failed("invalid URL"));
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return Promise.resolve(failed("not an http(s) URL"));
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) {
    const reason = blockedReason(host, options);
    if (reason) return Promise.resolve(failed(new BlockedAddressError(host, reason).message));
  }

  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const payload = Buffer.from(body, "utf8");
    const request = (target.protocol === "https:" ? https : http).request(target, {
      method: "POST",
      headers: { ...headers, "Content-Length": String(payload.length) },
      agent: false,
      lookup: guardedLookup(options),
    });
    let responseStatus: number | null = null;
    // The limit covers the whole attempt: an answer whose body is still trickling in when it runs out is a failure.
    const timer = setTimeout(() => {
      finish({
        ...failed(explainFailure({ code: "WEBHOOK_TIMEOUT" }, timeoutMs), "timeout"),
        status: responseStatus,
      });
      request.destroy();
    }, timeoutMs);
    request.on("socket", (socket) => {
      // Defence in depth: whatever path produced the connection, the peer it reached must pass the filter too.
      socket.once("connect", () => {
        const peer = socket.remoteAddress;
        const reason = peer ? blockedReason(peer, options) : "unknown";
        if (reason) request.destroy(new BlockedAddressError(peer ?? "peer", reason));
      });
    });
    request.on("error", (error) => finish(failed(explainFailure(error, timeoutMs), resultOf(error))));
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      responseStatus = status;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const text = Buffer.concat(chunks).toString("utf8").slice(0, RESPONSE_BODY_LIMIT);
        const success = status >= 200 && status < 300;
        let error: string | null = null;
        if (status >= 300 && status < 400) error = `HTTP ${status}: redirects are not followed`;
        else if (!success) error = `HTTP ${status}`;
        finish({
          result: success ? "success" : "http_error",
          status,
          body: text,
          error,
          success,
          durationMs: elapsed(),
        });
        response.destroy();
      };
      response.on("data", (chunk: Buffer) => {
        if (size >= RESPONSE_BYTES_LIMIT) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_BYTES_LIMIT) done();
      });
      response.on("end", done);
      // A body cut short after the status arrived still leaves a usable status.
      response.on("error", done);
      response.on("aborted", done);
    });
    request.end(payload);
  });
}
