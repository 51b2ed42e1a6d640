// The pages' window (docs/architecture.md, "Budgets: what one request may cost"), through the wrapper `npm start` puts
// around Next.js, on a real HTTP server and the real Redis: each visitor (a settings session, else a client address)
// reaches Next.js (here a stand-in that counts) at most RATE_LIMIT_PAGES_PER_MIN times a minute; the next is 429
// before the page runs; another visitor meanwhile is served; static assets and the worker's calls are not counted.
process.env.RATE_LIMIT_PAGES_PER_MIN = "5";

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { limitedPages } from "../../../server/http/pages";
import { CLIENT_ADDRESS_HEADER } from "../../../server/platform/client-address";

let server: Server;
let base = "";
let reached = 0;

beforeAll(async () => {
  server = createServer(
    limitedPages(async (_req, res) => {
      reached += 1;
      res.writeHead(200, { "Content-Type": "text/plain" }).end("Next.js");
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const unique = () => Math.random().toString(36).slice(2);
const asMember = (token: string) => ({ cookie: `theme=dark; better-auth.session_token=${token}.signature` });
const from = (address: string) => ({ [CLIENT_ADDRESS_HEADER]: address });

it("lets a session reach the pages 5 times a minute, then answers 429 with Retry-After before the page runs", async () => {
  reached = 0;
  const member = asMember(unique());
  const statuses = [];
  for (let i = 0; i < 7; i++) statuses.push((await fetch(`${base}/settings/usage/export`, { headers: member })).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
  expect(reached).toBe(5);
  const refused = await fetch(`${base}/settings/keys`, { headers: member });
  expect(refused.status).toBe(429);
  expect(refused.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(await refused.text()).toMatch(/^Too many requests: wait \d+ seconds and try again\n$/);
  // Another member, on the same address, has a window of its own.
  expect((await fetch(`${base}/settings/keys`, { headers: asMember(unique()) })).status).toBe(200);
  // The secure cookie's name counts as the same session.
  const secure = unique();
  for (let i = 0; i < 5; i++) {
    await fetch(`${base}/settings`, { headers: { cookie: `__Secure-better-auth.session_token=${secure}.signature` } });
  }
  expect((await fetch(`${base}/settings`, { headers: asMember(secure) })).status).toBe(429);
});

it("counts a visitor without a session by its client address, and never counts static assets or the worker", async () => {
  reached = 0;
  const address = `203.0.113.${Math.floor(Math.random() * 250)}`;
  for (let i = 0; i < 5; i++) await fetch(`${base}/signin`, { headers: from(address) });
  expect((await fetch(`${base}/signin`, { headers: from(address) })).status).toBe(429);
  expect((await fetch(`${base}/signin`, { headers: from("198.51.100.7") })).status).toBe(200);
  for (let i = 0; i < 10; i++) {
    expect((await fetch(`${base}/_next/static/chunks/app.js`, { headers: from(address) })).status).toBe(200);
    expect((await fetch(`${base}/api/inngest`, { method: "PUT", headers: from(address) })).status).toBe(200);
  }
  expect(reached).toBe(5 + 1 + 20);
});
