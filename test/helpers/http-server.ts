// A real HTTP server around the REST facade, for tests and the benchmark: the node:http listeners `npm start` serves
// /api/v1, /mcp, its OAuth doors and the SCIM door with (server/http/node.ts, server/mcp/endpoint.ts, server/mcp/oauth-http.ts),
// without Next.js.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientError, nodeApiListener } from "../../server/http/node";
import { type ApiHandlerOptions, createApiHandler } from "../../server/http/pipeline";
import { isScimTarget, scimListener } from "../../server/http/scim";
import { isMcpTarget, mcpListener } from "../../server/mcp/endpoint";
import { isOAuthTarget, oauthListener } from "../../server/mcp/oauth-http";

/** A running HTTP server that serves `/api/v1` with the facade's pipeline, `/mcp` and its OAuth doors. */
export interface TestServer {
  url: string;
  /** The MCP endpoint's URL. */
  mcpUrl: string;
  close(): Promise<void>;
}

/**
 * Starts the REST facade on a loopback port (ephemeral by default).
 * @param options pipeline options (the benchmark leaves layers out); default: every layer on.
 */
export async function startApi(port = 0, options?: ApiHandlerOptions): Promise<TestServer> {
  const api = nodeApiListener(options ? createApiHandler(options) : undefined);
  const server = createServer((req, res) => {
    const target = req.url ?? "/";
    if (isMcpTarget(target)) return mcpListener(req, res);
    if (isOAuthTarget(target)) return oauthListener(req, res);
    if (isScimTarget(target)) return scimListener(req, res);
    return api(req, res);
  });
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/api/v1`,
    mcpUrl: `${origin}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
