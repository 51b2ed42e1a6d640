// Dynamic client registration is open to anyone (docs/api-contract.md §10.6): each registration counts in the client
// address's anonymous window, so one address cannot fill the clients table, and no body over 64 KiB is read.
// The test client stands for one proxy whose X-Forwarded-For entry is believed, and its windows are this file's own:
// other files' requests share 127.0.0.1 and the run's store.
process.env.TRUST_PROXY = "1";
process.env.RATE_LIMIT_ANONYMOUS_PER_MIN = "3";
process.env.KV_PREFIX = `${process.env.KV_PREFIX ?? "test:"}oauth-registration-${process.pid}:`;

import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let origin: string;

beforeAll(async () => {
  server = await startApi();
  origin = new URL(server.mcpUrl).origin;
});
afterAll(() => server.close());

it("registration is rate-limited per client address: 429 with Retry-After past the anonymous window", async () => {
  const address = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
  const statuses: number[] = [];
  let refused: Response | undefined;
  for (let attempt = 0; attempt < 4; attempt += 1) {
    const response = await fetch(`${origin}/api/auth/oauth2/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Forwarded-For": address },
      body: JSON.stringify({
        client_name: `agent ${attempt}`,
        redirect_uris: ["https://chatgpt.com/connector_platform_oauth_redirect"],
        token_endpoint_auth_method: "none",
      }),
    });
    statuses.push(response.status);
    if (response.status === 429) refused = response;
  }
  expect(statuses).toEqual([201, 201, 201, 429]);
  expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(((await (refused as Response).json()) as { error: string }).error).toBe("rate_limited");
});

it("a body over 64 KiB to an OAuth door is 413, and the client is not registered", async () => {
  const clientName = `huge ${"x".repeat(70 * 1024)}`;
  const response = await fetch(`${origin}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Forwarded-For": "198.51.100.7" },
    body: JSON.stringify({ client_name: clientName, redirect_uris: ["https://example.com/cb"] }),
  });
  expect(response.status).toBe(413);
  expect(((await response.json()) as { error: string }).error).toBe("invalid_request");
  expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);
  expect(await prisma().oauthClient.count({ where: { name: clientName } })).toBe(0);
});
