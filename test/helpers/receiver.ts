// Real HTTP servers on 127.0.0.1 for the webhook tests: a webhook receiver that records what it got and answers as
// told, a stand-in for Inngest's event API, and the receiver side of docs/api-contract.md §6.4 written independently of
// server code.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request a receiver got. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body exactly as received. */
  body: string;
}

/**
 * How a receiver answers one request: a status (and body, headers), sent once `after` settles when given, or `hang` to
 * never answer.
 */
export type Reply = { status: number; body?: string; headers?: Record<string, string>; after?: Promise<void> } | "hang";

/** A running receiver: its URL, what it got so far, and a way to change its answers. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Sets how the n-th request (0-based, over the receiver's life) is answered. Default: 200 `ok`. */
  reply(fn: (request: ReceivedRequest, index: number) => Reply): void;
  close(): Promise<void>;
}

async function listen(handler: RequestListener) {
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Starts a webhook receiver on 127.0.0.1 (a free port); its URL ends in `/hook`. */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let answer: (request: ReceivedRequest, index: number) => Reply = () => ({ status: 200, body: "ok" });
  const { origin, close } = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(request);
      const reply = answer(request, requests.length - 1);
      if (reply === "hang") return;
      const send = () => {
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body ?? "");
      };
      if (reply.after) void reply.after.then(send);
      else send();
    });
  });
  return {
    url: `${origin}/hook`,
    requests,
    reply(fn) {
      answer = fn;
    },
    close,
  };
}

/** An event as Inngest's event API received it. */
export interface SentEvent {
  name: string;
  id?: string;
  data: Record<string, string>;
}

/** A stand-in for Inngest's event API (`POST /e/<key>`), answering like it; `failing` makes it answer 500. */
export interface FakeInngest {
  url: string;
  events: SentEvent[];
  /** Number of send requests answered 200 (one `inngest.send` with an array is one request). */
  posts: number;
  failing: boolean;
  close(): Promise<void>;
}

/** Starts a stand-in for the Inngest event API on 127.0.0.1; point the SDK at it with `INNGEST_DEV=<url>`. */
export async function startFakeInngest(): Promise<FakeInngest> {
  const fake: FakeInngest = { url: "", events: [], posts: 0, failing: false, close: async () => undefined };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const { origin, close } = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.startsWith("/e/")) return send(res, 404, { error: "not found" });
      if (fake.failing) return send(res, 500, { error: "unavailable", status: 500 });
      const events = JSON.parse(Buffer.concat(chunks).toString("utf8")) as SentEvent[];
      fake.events.push(...events);
      fake.posts++;
      send(res, 200, { ids: events.map((_, i) => `inngest-${fake.events.length + i}`), status: 200 });
    });
  });
  fake.url = origin;
  fake.close = close;
  return fake;
}

/**
 * The receiver side of docs/api-contract.md §6.4, from the contract's text only: parse `Service-Signature` into `t` and
 * every `v1`, compute lowercase hex HMAC-SHA256(secret, "<t>.<raw body>"), compare in constant time (lengths first),
 * and refuse a `t` more than 300 s from now.
 */
export function verifyServiceSignature(header: string | undefined, rawBody: string, secret: string, now = Date.now()) {
  if (!header) return false;
  let t: number | undefined;
  const v1: string[] = [];
  for (const part of header.split(",")) {
    const [key, value] = part.split("=", 2);
    if (key === "t") t = Number(value);
    if (key === "v1" && value) v1.push(value);
  }
  if (t === undefined || !Number.isInteger(t) || Math.abs(now / 1000 - t) > 300) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex"));
  return v1.some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
