// A real HTTP server around the REST facade, for tests and the benchmark: the node:http listener `npm start` serves
// /api/v1 with (server/http/node.ts), without Next.js.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientError, nodeApiListener } from "../../server/http/node";
import { type ApiHandlerOptions, createApiHandler } from "../../server/http/pipeline";

/** A running HTTP server that serves `/api/v1` with the facade's pipeline. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the REST facade on a loopback port (ephemeral by default).
 * @param options pipeline options (the benchmark leaves layers out); default: every layer on.
 */
export async function startApi(port = 0, options?: ApiHandlerOptions): Promise<TestServer> {
  const server = createServer(nodeApiListener(options ? createApiHandler(options) : undefined));
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/api/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
