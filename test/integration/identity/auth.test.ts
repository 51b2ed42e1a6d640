import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { handleFetchRequest } from "../../../server/http/fetch";
import { revokeApiKey } from "../../../server/platform/api-keys/service";
import { client, createKey, createTestOrg, startApi, type TestServer, unknownKey } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

describe("API keys (docs/api-contract.md §5)", () => {
  it("stores only the SHA-256 hash and a display prefix", async () => {
    const org = await createTestOrg(["accounts:read"]);
    const row = await prisma().apiKey.findFirstOrThrow({ where: { orgId: org.orgId } });
    expect(org.key).toMatch(/^msp_live_[0-9A-Za-z]{40}$/);
    expect(row.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.keyHash).not.toContain(org.key.slice(9));
    expect(org.key.startsWith(row.prefix)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(org.key);
  });

  it("gives the same 401 to missing, malformed, bad-checksum, unknown and revoked keys", async () => {
    const org = await createTestOrg(["accounts:read"]);
    const valid = client(server.url, org.key);
    expect((await valid("GET", "/accounts")).status).toBe(200);
    const unknown = await unknownKey();
    const badChecksum = `${org.key.slice(0, -1)}${org.key.endsWith("A") ? "B" : "A"}`;
    for (const key of [undefined, "nope", "msp_live_short", badChecksum, unknown]) {
      const res = await client(server.url, key)("GET", "/accounts");
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
    }
    const basic = await fetch(`${server.url}/accounts`, { headers: { Authorization: `Basic ${org.key}` } });
    expect(basic.status).toBe(401);
    await revokeApiKey(org.orgId, org.apiKeyId);
    const revoked = await valid("GET", "/accounts");
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.message).toBe((await client(server.url, unknown)("GET", "/accounts")).body.error.message);
  });

  it("refuses two Authorization headers with 400 in the envelope, on node:http and behind a fetch handler", async () => {
    const org = await createTestOrg(["accounts:read"]);
    const other = await createKey(org.orgId, ["accounts:read"]);
    const url = new URL(`${server.url}/accounts`);
    // fetch joins repeated headers into one; node:http sends them as given, and would itself keep only the first.
    const twice = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
      (resolve, reject) => {
        request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            // As an array the headers go out exactly as listed, so Host is given too.
            headers: ["Host", url.host, "Authorization", `Bearer ${org.key}`, "Authorization", `Bearer ${other}`],
          },
          (res) => {
            let body = "";
            res.on("data", (chunk) => {
              body += chunk;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          },
        )
          .on("error", reject)
          .end();
      },
    );
    expect(twice.status).toBe(400);
    const body = JSON.parse(twice.body);
    expect(body).toMatchObject({
      success: false,
      error: { code: "bad_request", details: [{ path: ["Authorization"], message: "repeated header" }] },
    });
    expect(twice.headers["x-request-id"]).toBe(body.requestId);
    expect(twice.headers["x-ratelimit-limit"]).toBeDefined();
    const joined = await handleFetchRequest(
      new Request(url, { headers: { Authorization: `Bearer ${org.key}, Bearer ${other}` } }),
    );
    expect(joined.status).toBe(400);
    expect((await joined.json()).error.code).toBe("bad_request");
    expect((await client(server.url, org.key)("GET", "/accounts")).status).toBe(200);
  });

  it("checks the key before validating input", async () => {
    const res = await client(server.url)("POST", "/accounts", { bogus: true });
    expect(res.status).toBe(401);
  });

  it("applies scope implications: write ⇒ read, admin:read ⇒ all reads, nothing else", async () => {
    const org = await createTestOrg(["accounts:write"]);
    const writer = client(server.url, org.key);
    expect((await writer("GET", "/accounts")).status).toBe(200);
    expect((await writer("POST", "/accounts", { name: "W" })).status).toBe(201);

    const admin = client(server.url, await createKey(org.orgId, ["admin:read"]));
    expect((await admin("GET", "/accounts")).status).toBe(200);
    expect((await admin("POST", "/accounts", { name: "A" })).status).toBe(403);

    const other = client(server.url, await createKey(org.orgId, ["contacts:write", "contracts:read"]));
    const refused = await other("GET", "/accounts");
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("insufficient_scope");
    expect(refused.body.error.message).toContain("accounts:read");
  });

  it("refuses deprecated scopes at key creation as the contract says", async () => {
    const org = await createTestOrg(["accounts:read"]);
    await expect(createKey(org.orgId, ["reconciliation:read"])).rejects.toMatchObject({
      code: "insufficient_scope",
      status: 403,
    });
    await expect(createKey(org.orgId, ["reconciliation:write"])).rejects.toMatchObject({ code: "insufficient_scope" });
    await expect(createKey(org.orgId, ["onboarding:read"])).rejects.toMatchObject({ code: "insufficient_scope" });
    await expect(createKey(org.orgId, ["accounts:delete"])).rejects.toMatchObject({ code: "validation_error" });
    const contracts = await createKey(org.orgId, ["contracts:read"]);
    expect((await client(server.url, contracts)("GET", "/accounts")).status).toBe(403);
  });

  it("test keys act on the same data as live keys", async () => {
    const org = await createTestOrg();
    const testKey = client(server.url, await createKey(org.orgId, ["accounts:write"], true));
    const created = await testKey("POST", "/accounts", { name: "From test key" });
    expect(created.status).toBe(201);
    const live = client(server.url, org.key);
    expect((await live("GET", `/accounts/${created.body.data.id}`)).status).toBe(200);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation's key 404 on get, patch and delete, and never lists foreign records", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const account = (await apiA("POST", "/accounts", { name: "Secret", externalId: "shared-ext" })).body.data;

    for (const [method, path, body] of [
      ["GET", `/accounts/${account.id}`, undefined],
      ["PATCH", `/accounts/${account.id}`, { name: "Hijacked" }],
      ["DELETE", `/accounts/${account.id}`, undefined],
      ["DELETE", `/accounts/${account.id}?force=true`, undefined],
    ] as const) {
      const res = await apiB(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await apiB("GET", `/accounts?cursor=${account.id}`)).status).toBe(400);
    expect((await apiB("GET", "/accounts")).body.data).toEqual([]);
    expect((await apiA("GET", `/accounts/${account.id}`)).body.data).toMatchObject({
      name: "Secret",
      lifecycleStatus: "PROSPECT",
    });

    const bulk = await apiB("POST", "/accounts/bulk", { accounts: [{ name: "B's own", externalId: "shared-ext" }] });
    expect(bulk.body.data).toMatchObject({ created: 1, updated: 0 });
    expect(bulk.body.data.results[0].id).not.toBe(account.id);
    expect((await apiA("GET", `/accounts/${account.id}`)).body.data.name).toBe("Secret");
    const sameExternal = await apiB("POST", "/accounts", { name: "B again", externalId: "other" });
    expect(sameExternal.status).toBe(201);
  });
});
