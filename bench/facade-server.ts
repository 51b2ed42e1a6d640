// The in-process reference of the throughput benchmark: the REST facade (`handleApiRequest`) behind a minimal
// node:http adapter, without Next.js, so the report can tell the framework's share of the cost from the facade's.
// Started by bench/run.ts as a child process: env DATABASE_URL, REDIS_URL, PORT; listens on 127.0.0.1.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { handleApiRequest } from "../server/http/handler";

const port = Number(process.env.PORT ?? 0);
const origin = `http://127.0.0.1:${port}`;

async function toRequest(req: IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD" && chunks.length > 0;
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  res.end(Buffer.from(await response.arrayBuffer()));
}

const server = createServer((req, res) => {
  toRequest(req)
    .then(handleApiRequest)
    .then((response) => send(res, response))
    .catch((error: unknown) => {
      console.error(error);
      res.statusCode = 500;
      res.end();
    });
});

server.listen(port, "127.0.0.1");
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
