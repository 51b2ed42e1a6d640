// A real HTTP server around the REST facade, for tests and the benchmark: the same handler Next.js mounts, without Next.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { handleApiRequest } from "../../server/http/handler";

/** A running HTTP server that serves `/api/v1` with the same handler Next.js mounts. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  // Streamed like Next.js does, so body limits are exercised as in production.
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
    duplex: "half",
  } as RequestInit);
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Starts the REST facade on a loopback port (ephemeral by default). */
export async function startApi(port = 0): Promise<TestServer> {
  let origin = "";
  const server = createServer((req, res) => {
    toRequest(req, origin)
      .then(handleApiRequest)
      .then((response) => send(res, response))
      .catch((error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/api/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
