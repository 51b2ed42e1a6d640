// API keys served from memory without a database round trip, and revocation on every instance within 1 s through the
// key-value store. "Another instance" here is a write made behind this process's back: the revocation in
// the database plus the generation bump in Redis, as another instance's revokeApiKey would do.
import { Redis } from "ioredis";

// A key-value namespace of this file's own: other test files revoke keys in parallel, and each revocation bumps the
// generation every process of one namespace watches, which would clear this cache between two requests here.
process.env.KV_PREFIX = `${process.env.KV_PREFIX ?? "test:"}key-cache-${process.pid}:`;
resetEnvCache();

import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { env, resetEnvCache } from "../../../server/env";
import { KEY_GENERATION_POLL_MS } from "../../../server/platform/api-keys/key-cache";
import { revokeApiKey } from "../../../server/platform/api-keys/service";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let redis: Redis;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  server = await startApi();
  redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  // The first generation read makes the cache trusted.
  await sleep(KEY_GENERATION_POLL_MS * 2);
});
afterAll(async () => {
  redis.disconnect();
  await server.close();
});

it("serves a known key from memory, and a revocation made elsewhere takes effect here within 1 s", async () => {
  // A generation poll may legitimately drop the cache between two requests (a key made in parallel, a slow store
  // read on a busy machine), so the first half is tried with up to three fresh keys: one must be served from memory.
  let api = client(server.url, "");
  let servedFromMemory = false;
  for (let attempt = 0; attempt < 3 && !servedFromMemory; attempt++) {
    const org = await createTestOrg(["accounts:read"]);
    api = client(server.url, org.key);
    await sleep(KEY_GENERATION_POLL_MS * 2);
    expect((await api("GET", "/accounts")).status).toBe(200);
    // Another instance revokes the key: the database changes, this process's cache does not know yet.
    await prisma().apiKey.update({ where: { id: org.apiKeyId }, data: { revokedAt: new Date() } });
    // Served from memory: no database round trip, so the revocation is not seen yet.
    servedFromMemory = (await api("GET", "/accounts")).status === 200;
  }
  expect(servedFromMemory).toBe(true);

  // The other instance publishes the change; every instance forgets its keys at its next read of the generation.
  await redis.incr(`${env().KV_PREFIX}auth:key-generation`);
  const revokedAt = Date.now();
  let status = 200;
  while (status === 200 && Date.now() - revokedAt < 2_000) {
    await sleep(50);
    status = (await api("GET", "/accounts")).status;
  }
  expect(status).toBe(401);
  expect(Date.now() - revokedAt).toBeLessThan(1_000);
});

it("a revocation in this process takes effect on its next request", async () => {
  const org = await createTestOrg(["accounts:read"]);
  const key = await createKey(org.orgId, ["accounts:read"]);
  const api = client(server.url, key);
  expect((await api("GET", "/accounts")).status).toBe(200);
  const stored = await prisma().apiKey.findFirstOrThrow({ where: { orgId: org.orgId, id: { not: org.apiKeyId } } });
  await revokeApiKey(org.orgId, stored.id);
  expect((await api("GET", "/accounts")).status).toBe(401);
});
