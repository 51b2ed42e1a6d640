import { afterAll, beforeAll, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { flushAudit } from "../../../server/platform/request-log/record";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

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

it("keeps only the parameter names of a request without an authenticated organisation: no erasure can reach such a row", async () => {
  const org = await createTestOrg(["contacts:read"]);
  const query = `email%5Bin%5D=${encodeURIComponent("bob@harbor.example,carl@harbor.example")}&q=${encodeURIComponent('"Carl Lee"')}&limit=5`;
  const anonymous = await client(server.url)("GET", `/contacts?${query}`);
  const badKey = await client(server.url, "msp_live_notakey000000000000000000000000")("GET", `/contacts?${query}`);
  const known = await client(server.url, org.key)(
    "GET",
    `/contacts?email=${encodeURIComponent("carl@harbor.example")}`,
  );
  expect([anonymous.status, badKey.status, known.status]).toEqual([401, 401, 200]);
  await flushAudit();
  const rows = await prisma().auditLog.findMany({
    where: { requestId: { in: [anonymous, badKey, known].map((res) => res.body.requestId) } },
  });
  const byRequest = new Map(rows.map((row) => [row.requestId, row]));
  for (const refused of [anonymous, badKey]) {
    expect(byRequest.get(refused.body.requestId)).toMatchObject({
      orgId: null,
      status: 401,
      query: "email%5Bin%5D&q&limit",
    });
  }
  // With an organisation, the query is kept as sent (form-encoded), for the organisation to see and to erase from.
  expect(byRequest.get(known.body.requestId)).toMatchObject({ orgId: org.orgId, query: "email=carl%40harbor.example" });
});
