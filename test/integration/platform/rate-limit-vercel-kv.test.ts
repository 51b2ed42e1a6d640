// Rate limits over real HTTP on the @vercel/kv driver, through the Upstash-REST shim over the real Redis: the same
// cases as the TCP driver, and the shim shows the driver really spoke REST to it.
import { expect, it } from "vitest";
import { startUpstashShim, type UpstashShim } from "../../helpers/upstash-shim";
import { rateLimitSuite } from "./rate-limit.suite";

let shim: UpstashShim;

rateLimitSuite("vercel-kv", {
  before: async () => {
    shim = await startUpstashShim(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    process.env.KV_REST_API_URL = shim.url;
    process.env.KV_REST_API_TOKEN = shim.token;
  },
  after: () => shim.close(),
});

it("sent every command to the shim as Upstash REST with base64 responses", () => {
  const commands = shim.requests.flatMap((request) => request.commands);
  expect(commands.filter((command) => command === "evalsha").length).toBeGreaterThanOrEqual(100);
  expect(commands).toContain("ping");
  expect(shim.requests.every((request) => request.base64 && request.status === 200)).toBe(true);
});
