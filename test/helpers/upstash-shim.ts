// A test-only Upstash REST endpoint over a real Redis (docs/architecture.md, "Key-value store and rate limits"), so the
// @vercel/kv driver runs against the same Redis as the TCP driver. Implements what @upstash/redis sends: a command as a
// JSON array on `POST /`, arrays of commands on `POST /pipeline` and `POST /multi-exec`, path-style commands (`/ping`),
// `Authorization: Bearer <token>` (or `?_token=`), `{result}` / `{error}` bodies (HTTP 400 for a failed single command,
// 401 for a bad token) and, when `Upstash-Encoding: base64` is sent, every string in a result base64-encoded except
// "OK".
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";

/** One request the shim answered, for assertions: the path, the commands' names and the encoding header. */
export interface ShimRequest {
  path: string;
  commands: string[];
  base64: boolean;
  status: number;
}

/** A running shim: its URL and token (the `KV_REST_API_*` values), the requests it answered, and `close()`. */
export interface UpstashShim {
  url: string;
  token: string;
  requests: ShimRequest[];
  close(): Promise<void>;
}

type Reply = Buffer | number | null | Error | Reply[];

function encode(reply: Reply, base64: boolean): unknown {
  if (Array.isArray(reply)) return reply.map((item) => encode(item, base64));
  if (reply instanceof Error) return reply.message;
  if (Buffer.isBuffer(reply)) {
    const text = reply.toString("utf8");
    return base64 && text !== "OK" ? reply.toString("base64") : text;
  }
  return reply;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function isCommand(value: unknown): value is (string | number)[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((part) => typeof part === "string" || typeof part === "number")
  );
}

/**
 * Starts the shim on a loopback port, forwarding commands to the Redis at `redisUrl` over its own connection.
 * @param options.token the bearer token to require; default a fixed test token.
 * @param options.port the port to listen on (to restart a shim where a client expects it); default a free one.
 */
export async function startUpstashShim(
  redisUrl: string,
  options: { token?: string; port?: number } = {},
): Promise<UpstashShim> {
  const token = options.token ?? "test-upstash-token";
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  const requests: ShimRequest[] = [];

  const run = ([name, ...args]: (string | number)[]): Promise<Reply> =>
    redis.callBuffer(String(name), ...args.map(String)) as Promise<Reply>;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://shim");
    const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
    const send = (status: number, body: unknown, commands: string[]) => {
      requests.push({ path: url.pathname, commands, base64, status });
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const presented = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? url.searchParams.get("_token");
    if (presented !== token) return send(401, { error: "Unauthorized" }, []);
    if (req.method !== "POST" && req.method !== "GET") return send(405, { error: "Method not allowed" }, []);

    const text = await readBody(req);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return send(400, { error: "ERR failed to parse JSON body" }, []);
    }

    if (url.pathname === "/pipeline" || url.pathname === "/multi-exec") {
      if (!Array.isArray(body) || body.length === 0 || !body.every(isCommand)) {
        return send(400, { error: "ERR body must be a non-empty array of commands" }, []);
      }
      const names = body.map((command) => String(command[0]).toLowerCase());
      if (url.pathname === "/pipeline") {
        const replies = await Promise.all(
          body.map((command) =>
            run(command).then(
              (result) => ({ result: encode(result, base64) }),
              (error: Error) => ({ error: error.message }),
            ),
          ),
        );
        return send(200, replies, names);
      }
      const multi = redis.multi();
      for (const [name, ...args] of body) multi.callBuffer(String(name), ...args.map(String));
      const replies = (await multi.exec()) ?? [];
      return send(
        200,
        replies.map(([error, result]) =>
          error ? { error: error.message } : { result: encode(result as Reply, base64) },
        ),
        names,
      );
    }

    // A single command: the JSON array body, or path segments (`/get/foo`).
    const command = url.pathname === "/" ? body : url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (!isCommand(command)) return send(400, { error: "ERR command must be a JSON array" }, []);
    const names = [String(command[0]).toLowerCase()];
    try {
      return send(200, { result: encode(await run(command), base64) }, names);
    } catch (error) {
      return send(400, { error: (error as Error).message }, names);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}
