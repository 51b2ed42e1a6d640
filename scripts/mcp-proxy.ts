// A reverse proxy in front of `/mcp` (scripts/mcp-clients.ts), for two reasons. With a key it adds
// `Authorization: Bearer <key>` to every request, for clients that cannot send a header of their own: the official MCP
// conformance suite sends none, and our endpoint answers 401 without one. With or without a key it notes each exchange
// (the JSON-RPC method, the protocol version header, the status), so a run can show which revision a client really
// spoke rather than trust its flags. Everything else passes through byte for byte, `Host` and `Origin` included, so
// the server still judges DNS rebinding itself: the suite's rebinding scenario sends a foreign Host through this proxy
// and must get our server's 403, not the proxy's opinion. No dependencies: node:http only.
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the proxy forwarded, as the run's summary reports it. */
export interface ProxyExchange {
  /** The HTTP method. */
  method: string;
  /** The first JSON-RPC message's `method`, when the body is JSON-RPC (a response to the server has none). */
  rpcMethod?: string;
  /** The `MCP-Protocol-Version` header the client sent (absent on a 2025 `initialize`). */
  protocolVersion?: string;
  /** The `Host` header the client sent, forwarded unchanged. */
  host?: string;
  /** The server's status, or 502 when the server could not be reached. */
  status: number;
}

/** A running proxy: its `/mcp` URL, what it forwarded so far, and how to stop it. */
export interface McpProxy {
  url: string;
  exchanges: ProxyExchange[];
  close(): Promise<void>;
}

function rpcMethodOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as unknown;
    const first = (Array.isArray(parsed) ? parsed[0] : parsed) as { method?: unknown } | null;
    return typeof first?.method === "string" ? first.method : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The client's headers as sent, raw names and repeats kept (a header-validation probe may repeat one on purpose). With
 * a key, the client's own `Authorization` is replaced rather than kept beside ours: the endpoint refuses two (400).
 */
function forwardedHeaders(req: IncomingMessage, key: string | undefined): string[] {
  const headers: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    if (key === undefined || name.toLowerCase() !== "authorization")
      headers.push(name, req.rawHeaders[i + 1] as string);
  }
  if (key !== undefined) headers.push("Authorization", `Bearer ${key}`);
  return headers;
}

/** How {@link startMcpProxy} forwards. */
export interface McpProxyOptions {
  /** The API key to send as `Authorization: Bearer`; without one, the client's own headers go through untouched. */
  key?: string;
  /** The port to listen on (127.0.0.1); an ephemeral one when absent. */
  port?: number;
}

/**
 * Starts the proxy on 127.0.0.1 in front of `target` (the server's `/mcp` URL). The proxy's own URL keeps `target`'s
 * path, so a client given it reaches the same endpoint.
 */
export async function startMcpProxy(target: string, options: McpProxyOptions = {}): Promise<McpProxy> {
  const { key, port = 0 } = options;
  const upstream = new URL(target);
  const exchanges: ProxyExchange[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      // Bodies are small JSON-RPC messages: holding one whole lets the proxy note its method before sending it on.
      const body = Buffer.concat(chunks);
      const exchange: ProxyExchange = {
        method: req.method ?? "GET",
        rpcMethod: rpcMethodOf(body),
        protocolVersion: req.headers["mcp-protocol-version"] as string | undefined,
        host: req.headers.host,
        status: 502,
      };
      exchanges.push(exchange);
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          // A flat array keeps raw names and repeated headers; Node then sends the Host given here, not its own.
          headers: forwardedHeaders(req, key),
        },
        (answer) => {
          exchange.status = answer.statusCode ?? 502;
          res.writeHead(exchange.status, answer.rawHeaders);
          // An event stream is passed on as it comes.
          answer.pipe(res);
        },
      );
      // A client that hangs up (an Inspector leaving a subscriptions/listen stream open) hangs up upstream too, or the
      // server would hold that stream until it stops.
      res.on("close", () => forward.destroy());
      forward.on("error", (error) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(502, { "Content-Type": "text/plain" }).end(`mcp-proxy: ${error.message}`);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}${upstream.pathname}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
