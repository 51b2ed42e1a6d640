import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { flushAudit } from "../../server/services/audit";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

it("records every call with organisation, key, outcome and the test-key flag (docs/api-contract.md §1, §5.6)", async () => {
  const org = await createTestOrg(["accounts:read"]);
  const testKey = await createKey(org.orgId, ["accounts:write"], true);
  const live = client(server.url, org.key);
  const ok = await live("GET", "/accounts?limit=5", undefined, { "User-Agent": "psa-sync/2.1" });
  const refused = await live("POST", "/accounts", { name: "x" });
  const created = await client(server.url, testKey)("POST", "/accounts", { name: "From a test key" });
  const anonymous = await client(server.url)("GET", "/accounts");
  await flushAudit();

  const rows = await prisma().auditLog.findMany({
    where: { requestId: { in: [ok, refused, created, anonymous].map((res) => res.body.requestId) } },
  });
  const byRequest = new Map(rows.map((row) => [row.requestId, row]));
  expect(byRequest.get(ok.body.requestId)).toMatchObject({
    orgId: org.orgId,
    apiKeyId: org.apiKeyId,
    method: "GET",
    path: "/api/v1/accounts",
    query: "limit=5",
    status: 200,
    errorCode: null,
    isTest: false,
    userAgent: "psa-sync/2.1",
  });
  expect(byRequest.get(refused.body.requestId)).toMatchObject({
    orgId: org.orgId,
    status: 403,
    errorCode: "insufficient_scope",
  });
  expect(byRequest.get(created.body.requestId)).toMatchObject({ orgId: org.orgId, status: 201, isTest: true });
  expect(byRequest.get(anonymous.body.requestId)).toMatchObject({
    orgId: null,
    apiKeyId: null,
    status: 401,
    errorCode: "unauthorized",
  });
  for (const row of rows) expect(row.durationMs).toBeGreaterThanOrEqual(0);
});
