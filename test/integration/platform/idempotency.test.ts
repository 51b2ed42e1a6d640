// Idempotency-Key on POST, PATCH and DELETE (docs/api-contract.md §8, docs/architecture.md, "Idempotency"), through
// real HTTP against the real PostgreSQL.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { purgeExpiredIdempotencyKeys } from "../../../server/platform/idempotency";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let orgId: string;
let apiKeyId: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  apiKeyId = org.apiKeyId;
  api = client(server.url, org.key);
});
afterAll(() => server.close());

const newKey = () => `idem-${randomBytes(8).toString("hex")}`;
const withKey = (key: string) => ({ "Idempotency-Key": key });

async function eventCount(name: string, accountId: string): Promise<number> {
  return prisma().event.count({ where: { orgId, name, data: { path: ["id"], equals: accountId } } });
}

describe("Idempotency-Key", () => {
  it("20 concurrent identical POSTs with one key create exactly one record", async () => {
    const key = newKey();
    const name = `Concurrent ${key}`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => api("POST", "/accounts", { name }, withKey(key))),
    );
    expect(await prisma().account.count({ where: { orgId, name } })).toBe(1);
    const created = responses.filter((res) => res.status === 201);
    const inProgress = responses.filter((res) => res.status === 409);
    expect(created.length + inProgress.length).toBe(20);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((res) => res.body.data.id)).size).toBe(1);
    for (const res of inProgress) {
      expect(res.body.error.code).toBe("idempotency_in_progress");
      expect(res.headers.get("retry-after")).toBe("1");
    }
    // Every attempt after the first that got through was a replay, not a second run.
    expect(created.filter((res) => res.headers.get("x-idempotent-replay") !== "true")).toHaveLength(1);
    expect(await eventCount("account.created", created[0]?.body.data.id)).toBe(1);
  });

  it("replays the original status, body and headers without running again", async () => {
    const key = newKey();
    const first = await api("POST", "/accounts", { name: `Replay ${key}`, industry: "Legal" }, withKey(key));
    expect(first.status).toBe(201);
    expect(first.headers.get("x-idempotent-replay")).toBeNull();

    const again = await api("POST", "/accounts", { industry: "Legal", name: `Replay ${key}` }, withKey(key));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("x-idempotent-replay")).toBe("true");
    expect(again.headers.get("x-original-request-id")).toBe(first.body.requestId);
    expect(again.headers.get("x-request-id")).toMatch(/^req_/);
    expect(again.headers.get("x-request-id")).not.toBe(first.body.requestId);
    expect(again.headers.get("content-type")).toContain("application/json");
    expect(await prisma().account.count({ where: { orgId, name: `Replay ${key}` } })).toBe(1);
    expect(await eventCount("account.created", first.body.data.id)).toBe(1);

    const row = await prisma().idempotencyKey.findUniqueOrThrow({
      where: { orgId_apiKeyId_key: { orgId, apiKeyId, key } },
    });
    expect(row).toMatchObject({ method: "POST", path: "/accounts", status: 201, requestId: first.body.requestId });
    const retention = row.expiresAt.getTime() - row.createdAt.getTime();
    expect(retention).toBe(24 * 60 * 60 * 1000);
  });

  it("refuses the same key with a different body, method or path with 422 idempotency_conflict", async () => {
    const key = newKey();
    expect((await api("POST", "/accounts", { name: `Conflict ${key}` }, withKey(key))).status).toBe(201);
    const otherBody = await api("POST", "/accounts", { name: `Other ${key}` }, withKey(key));
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error.code).toBe("idempotency_conflict");
    expect(otherBody.body.error.docsUrl).toContain("/docs/errors#idempotency_conflict");
    const otherPath = await api("POST", "/contacts", { firstName: "A", lastName: "B" }, withKey(key));
    expect(otherPath.status).toBe(422);
    expect(otherPath.body.error.code).toBe("idempotency_conflict");
    expect(await prisma().account.count({ where: { orgId, name: `Other ${key}` } })).toBe(0);
  });

  it("answers a malformed key with 400 bad_request and runs nothing", async () => {
    for (const bad of ["has space", "a".repeat(256), "ünïcode", "semi;colon"]) {
      const res = await api("POST", "/accounts", { name: `Malformed ${bad}` }, withKey(bad));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
      expect(res.body.error.message).toContain("Idempotency-Key");
    }
    expect(await prisma().account.count({ where: { orgId, name: { startsWith: "Malformed" } } })).toBe(0);
    const longest = await api("POST", "/accounts", { name: "Longest key" }, withKey("A".repeat(255)));
    expect(longest.status).toBe(201);
  });

  it("is scoped per organisation and per key", async () => {
    const key = newKey();
    const other = await createTestOrg();
    const otherApi = client(server.url, other.key);
    const secondKeyApi = client(server.url, await createKey(orgId, ["accounts:write"]));
    const mine = await api("POST", "/accounts", { name: `Scoped ${key}` }, withKey(key));
    const theirs = await otherApi("POST", "/accounts", { name: `Scoped ${key}` }, withKey(key));
    const sibling = await secondKeyApi("POST", "/accounts", { name: `Scoped ${key}` }, withKey(key));
    for (const res of [mine, theirs, sibling]) {
      expect(res.status).toBe(201);
      expect(res.headers.get("x-idempotent-replay")).toBeNull();
    }
    expect(new Set([mine.body.data.id, theirs.body.data.id, sibling.body.data.id]).size).toBe(3);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
    expect(await prisma().account.count({ where: { orgId: other.orgId, name: `Scoped ${key}` } })).toBe(1);
  });

  it("replays a PATCH without applying it again", async () => {
    const account = (await api("POST", "/accounts", { name: "Patch me" })).body.data;
    const key = newKey();
    const first = await api("PATCH", `/accounts/${account.id}`, { name: "Patched once" }, withKey(key));
    expect(first.status).toBe(200);
    expect((await api("PATCH", `/accounts/${account.id}`, { name: "Changed since" })).status).toBe(200);
    const replay = await api("PATCH", `/accounts/${account.id}`, { name: "Patched once" }, withKey(key));
    expect(replay.status).toBe(200);
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.body.data.name).toBe("Patched once");
    expect((await prisma().account.findUniqueOrThrow({ where: { id: account.id } })).name).toBe("Changed since");
    expect(await eventCount("account.updated", account.id)).toBe(2);
  });

  it("replays a DELETE: the retry of a hard delete gets the original 200, not 404", async () => {
    const account = (await api("POST", "/accounts", { name: "Delete me" })).body.data;
    const key = newKey();
    const first = await api("DELETE", `/accounts/${account.id}?force=true`, undefined, withKey(key));
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ id: account.id, deleted: true });
    const replay = await api("DELETE", `/accounts/${account.id}?force=true`, undefined, withKey(key));
    expect(replay.status).toBe(200);
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const withoutKey = await api("DELETE", `/accounts/${account.id}?force=true`);
    expect(withoutKey.status).toBe(404);
    const soft = await api("DELETE", `/accounts/${account.id}`, undefined, withKey(key));
    expect(soft.status).toBe(422);
    expect(soft.body.error.code).toBe("idempotency_conflict");
  });

  it("replays a bulk upsert without writing rows or events again", async () => {
    const key = newKey();
    const accounts = Array.from({ length: 50 }, (_, i) => ({ name: `Bulk ${i}`, externalId: `${key}-${i}` }));
    const first = await api("POST", "/accounts/bulk", { accounts }, withKey(key));
    expect(first.status).toBe(200);
    const before = await prisma().account.findMany({
      where: { orgId, externalId: { startsWith: key } },
      select: { id: true, updatedAt: true },
    });
    expect(before).toHaveLength(50);
    const events = await prisma().event.count({ where: { orgId, name: "account.created" } });
    const replay = await api("POST", "/accounts/bulk", { accounts }, withKey(key));
    expect(replay.status).toBe(200);
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.body).toEqual(first.body);
    const after = await prisma().account.findMany({
      where: { orgId, externalId: { startsWith: key } },
      select: { id: true, updatedAt: true },
    });
    expect(after).toEqual(before);
    expect(await prisma().event.count({ where: { orgId, name: "account.created" } })).toBe(events);
  });

  it("does not store failed requests: a validation failure can be retried with the same key", async () => {
    const key = newKey();
    const invalid = await api("POST", "/accounts", { name: "" }, withKey(key));
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.code).toBe("validation_error");
    const missing = await api("PATCH", "/accounts/acc_missing", { name: "x" }, withKey(key));
    expect(missing.status).toBe(404);
    expect(await prisma().idempotencyKey.count({ where: { orgId, key } })).toBe(0);
    const valid = await api("POST", "/accounts", { name: `Valid ${key}` }, withKey(key));
    expect(valid.status).toBe(201);
    expect(valid.headers.get("x-idempotent-replay")).toBeNull();
  });

  it("ignores the header on GET", async () => {
    const res = await api("GET", "/accounts?limit=1", undefined, withKey("not valid!"));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-idempotent-replay")).toBeNull();
  });

  it("purges expired records, after which the key runs the request anew", async () => {
    const key = newKey();
    const first = await api("POST", "/accounts", { name: `Expiring ${key}` }, withKey(key));
    expect(first.status).toBe(201);
    await prisma().idempotencyKey.updateMany({
      where: { orgId, key },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    // An expired record is never replayed, even before the purge removes it.
    const anew = await api("POST", "/accounts", { name: `Expiring ${key}` }, withKey(key));
    expect(anew.status).toBe(201);
    expect(anew.headers.get("x-idempotent-replay")).toBeNull();
    expect(anew.body.data.id).not.toBe(first.body.data.id);

    await prisma().idempotencyKey.updateMany({
      where: { orgId, key },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    expect(await purgeExpiredIdempotencyKeys()).toBeGreaterThanOrEqual(1);
    expect(await prisma().idempotencyKey.count({ where: { orgId, key } })).toBe(0);
  });
});
