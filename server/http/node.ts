// The REST facade on node:http (docs/architecture.md, "The REST facade": the custom server hands /api/v1 straight to
// the pipeline, without Next.js): an IncomingMessage becomes an ApiRequest, a Reply is written back, and errors Node
// itself raises while parsing a request (a URL or headers over 16 KB, a malformed request line) are answered in the
// envelope too.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import { ERROR_CODES, type ErrorCode } from "../errors";
import { observeRequest } from "../observability/requests";
import { enforceRateLimit } from "../platform/limits/rate-limits";
import { docsUrlFor, newRequestId } from "./envelope";
import type { ApiRequest, Reply } from "./exchange";
import { clientAddress, publicOrigin } from "./origin";
import { handleApiRequest } from "./pipeline";

interface NodeApiRequest extends ApiRequest {
  /** Set when the body passed the limit: the rest was not read, so the connection is closed after the answer. */
  bodyCut: boolean;
}

/** Reads a node:http request's headers by lower-case name, repeated headers joined with ", " (an `ApiRequest`'s way). */
export function headerReader(req: IncomingMessage): (name: string) => string | undefined {
  return (name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
}

/**
 * The web `Request` of a node:http request for a handler that takes one (better-auth's OAuth and SCIM endpoints): its
 * headers, and for a method with a body that body read whole, at most `maxBodyBytes`.
 * @returns null when the body is over `maxBodyBytes` (the caller answers 413).
 */
export async function webRequestOf(req: IncomingMessage, url: string, maxBodyBytes: number): Promise<Request | null> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const method = req.method ?? "GET";
  if (method === "GET" || method === "HEAD") return new Request(url, { method, headers });
  const body = await toApiRequest(req).readBody(maxBodyBytes);
  if (body === null) return null;
  headers.delete("content-length");
  return new Request(url, { method, headers, body: new Uint8Array(body) });
}

function readBody(req: IncomingMessage, limit: number, request: NodeApiRequest): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        cleanup();
        req.pause();
        request.bodyCut = true;
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, total));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/** The {@link ApiRequest} of a node:http request; the body is read only when the pipeline asks for it. */
export function toApiRequest(req: IncomingMessage): ApiRequest & { bodyCut: boolean } {
  const request: NodeApiRequest = {
    method: req.method ?? "GET",
    target: req.url ?? "/",
    header: headerReader(req),
    repeated: (name) => (req.headersDistinct[name]?.length ?? 0) > 1,
    readBody: (limit) => readBody(req, limit, request),
    socketAddress: req.socket.remoteAddress ?? null,
    encrypted: Boolean((req.socket as TLSSocket).encrypted),
    bodyCut: false,
  };
  return request;
}

/**
 * Writes a reply to a node:http response with its `Content-Length`. When the request body was cut short at the size
 * limit, the connection is closed after the answer instead of reading the rest.
 */
export function writeReply(res: ServerResponse, reply: Reply, bodyCut = false): void {
  res.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  const body = reply.body === null ? undefined : Buffer.from(reply.body);
  if (body) res.setHeader("Content-Length", body.byteLength);
  if (bodyCut) {
    res.setHeader("Connection", "close");
    res.end(body, () => res.socket?.destroy());
  } else {
    res.end(body);
  }
}

/** A node:http request listener serving `/api/v1` with `handler` (default: the facade with every layer). */
export function nodeApiListener(handler = handleApiRequest): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const request = toApiRequest(req);
    handler(request).then(
      (reply) => writeReply(res, reply, request.bodyCut),
      // The handler never throws; this only guards against a broken socket.
      () => res.destroy(),
    );
  };
}

/**
 * Answers the errors Node raises before a request reaches any listener (`clientError`), in the envelope: a request
 * line or headers over Node's 16 KB limit → 431 `headers_too_large`; any other malformed request (an unknown method,
 * a broken request line) → 400 `bad_request`. Counted against the socket address's anonymous rate-limit window, whose
 * headers it carries like every answer, and logged like every request (method `_OTHER`, route null). A connection
 * that is gone or timed out is closed without an answer.
 */
export async function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): Promise<void> {
  if (!socket.writable || error.code === "ECONNRESET" || error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    socket.destroy();
    return;
  }
  const address = (socket as Socket).remoteAddress ?? null;
  const requestId = newRequestId();
  // Logged like every request, with the method unknown (the request line could not be read).
  const observation = observeRequest(requestId, "_OTHER", () => undefined);
  const limits = await enforceRateLimit({
    kind: "anonymous",
    ip: clientAddress(() => undefined, address) ?? "unknown",
  });
  const code: ErrorCode = error.code === "HPE_HEADER_OVERFLOW" ? "headers_too_large" : "bad_request";
  const message =
    code === "headers_too_large"
      ? "The request line and headers exceed 16 KB; shorten the URL or the headers"
      : "The request is not valid HTTP/1.1";
  const body = JSON.stringify({
    success: false,
    error: {
      code,
      message,
      docsUrl: docsUrlFor(
        publicOrigin(() => undefined),
        code,
      ),
    },
    requestId,
    timestamp: new Date().toISOString(),
  });
  const status = ERROR_CODES[code].status;
  const headers = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(body)),
    "X-Request-Id": requestId,
    "Cache-Control": "no-store",
    Connection: "close",
    ...limits.headers,
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${ERROR_CODES[code].title}\r\n${head}\r\n${body}`);
  observation.end({ route: null, status, errorCode: code });
}
