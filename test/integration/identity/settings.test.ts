// The settings UI's server side through its tRPC caller: key rotation, the audit log's filters and keyset paging,
// rate-limit plan, and tenancy, as an organisation's owner signed in through better-auth, against the real PostgreSQL.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { authFor } from "../../../server/identity/better-auth";
import { forgetCachedKeys } from "../../../server/platform/api-keys/key-cache";
import { KEY_ROTATION_GRACE_MS } from "../../../server/platform/api-keys/rotation";
import { authenticateApiKey } from "../../../server/platform/api-keys/service";
import { ensureOrganisation } from "../../../server/platform/organisations";
import { addMember, browserRequest, refusal, TEST_ORIGIN } from "../../helpers/members";

afterAll(() => closeDb());

async function signedIn(options: { plan?: "STARTER" | "SCALE"; limits?: { perKey: number; perOrg: number } } = {}) {
  const slug = `s-${randomBytes(5).toString("hex")}`;
  const org = await ensureOrganisation(slug, options);
  const owner = await addMember(org.id, "owner", slug);
  return { orgId: org.id, slug, userId: owner.userId, caller: owner.caller };
}

describe("API keys", () => {
  it("creates keys with the scope rules of docs/api-contract.md §5 and the services' messages", async () => {
    const { caller } = await signedIn();
    const refused = await refusal(caller.apiKeys.create({ name: "r", mode: "live", scopes: ["reconciliation:write"] }));
    expect(refused.code).toBe("FORBIDDEN");
    expect(refused.message).toBe(
      "Scope reconciliation:write refused: reconciliation scopes are deprecated and can no longer be granted",
    );
    expect((await refusal(caller.apiKeys.create({ name: "u", mode: "live", scopes: ["nope:read"] }))).code).toBe(
      "UNPROCESSABLE_CONTENT",
    );
    expect((await refusal(caller.apiKeys.create({ name: " ", mode: "live", scopes: ["mrr:read"] }))).code).toBe(
      "BAD_REQUEST",
    );
    const { key, raw } = await caller.apiKeys.create({
      name: "Billing",
      mode: "live",
      scopes: ["contracts:read", "mrr:read"],
    });
    expect(raw).toMatch(/^msp_live_/);
    expect(key).toMatchObject({ name: "Billing", isTest: false, scopes: ["mrr:read", "contracts:read"] });
    expect(await caller.apiKeys.list()).toEqual([expect.objectContaining({ id: key.id, expiresAt: null })]);
  });

  it("rotation keeps the old key working for 24 hours, once; revoke ends it at once", async () => {
    const { orgId, caller } = await signedIn();
    const { key, raw } = await caller.apiKeys.create({ name: "Sync", mode: "test", scopes: ["accounts:write"] });
    const before = Date.now();
    const rotated = await caller.apiKeys.rotate({ id: key.id });
    expect(rotated.key).toMatchObject({ name: "Sync", isTest: true, scopes: ["accounts:write"] });
    expect(rotated.key.id).not.toBe(key.id);
    expect(rotated.raw).toMatch(/^msp_test_/);
    const grace = rotated.previous.expiresAt.getTime() - before;
    expect(grace).toBeGreaterThanOrEqual(KEY_ROTATION_GRACE_MS - 1_000);
    expect(grace).toBeLessThanOrEqual(KEY_ROTATION_GRACE_MS + 5_000);
    expect((await authenticateApiKey(`Bearer ${raw}`)).apiKeyId).toBe(key.id);
    expect((await authenticateApiKey(`Bearer ${rotated.raw}`)).apiKeyId).toBe(rotated.key.id);

    const twice = await refusal(caller.apiKeys.rotate({ id: key.id }));
    expect(twice.code).toBe("UNPROCESSABLE_CONTENT");
    expect(twice.message).toMatch(/already rotated/);
    // The refused second rotation created no key.
    expect(await prisma().apiKey.count({ where: { orgId } })).toBe(2);

    // When the grace period is over the old key is refused like any invalid key.
    await prisma().apiKey.update({ where: { id: key.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    // The row was changed behind the services' back (only a test does that): drop the 10 s key cache as they would.
    await forgetCachedKeys();
    await expect(authenticateApiKey(`Bearer ${raw}`)).rejects.toMatchObject({ code: "unauthorized" });
    expect((await refusal(caller.apiKeys.rotate({ id: key.id }))).code).toBe("NOT_FOUND");

    await caller.apiKeys.revoke({ id: rotated.key.id });
    await expect(authenticateApiKey(`Bearer ${rotated.raw}`)).rejects.toMatchObject({ code: "unauthorized" });
    expect((await refusal(caller.apiKeys.revoke({ id: rotated.key.id }))).code).toBe("NOT_FOUND");
    expect((await refusal(caller.apiKeys.rotate({ id: rotated.key.id }))).code).toBe("NOT_FOUND");
  });

  it("another organisation's keys are not found", async () => {
    const owner = await signedIn();
    const other = await signedIn();
    const { key, raw } = await owner.caller.apiKeys.create({ name: "Mine", mode: "live", scopes: ["deals:read"] });
    expect(await other.caller.apiKeys.list()).toEqual([]);
    expect((await refusal(other.caller.apiKeys.revoke({ id: key.id }))).code).toBe("NOT_FOUND");
    expect((await refusal(other.caller.apiKeys.rotate({ id: key.id }))).code).toBe("NOT_FOUND");
    expect((await authenticateApiKey(`Bearer ${raw}`)).orgId).toBe(owner.orgId);
    expect(await prisma().apiKey.count({ where: { orgId: owner.orgId } })).toBe(1);
  });
});

describe("refusals name their reason", () => {
  it("a webhook endpoint's refusal says what is wrong; text PostgreSQL cannot store is refused, not a 500", async () => {
    const { caller } = await signedIn();
    const refused = await refusal(caller.webhooks.create({ url: "http://10.0.0.5/hook", events: ["*"] }));
    expect(refused.code).toBe("UNPROCESSABLE_CONTENT");
    expect(refused.message).toContain("private or reserved address (10.0.0.5)");
    const nul = await refusal(
      caller.apiKeys.create({ name: "bad\u0000name", scopes: ["accounts:read"], mode: "test" }),
    );
    expect(nul.code).toBe("UNPROCESSABLE_CONTENT");
    expect(nul.message).toBe("name must not contain the NUL character (U+0000)");
    // Sign-in with such an address is refused as an invalid email (400), not an error.
    await expect(
      authFor(TEST_ORIGIN).api.signInEmail({
        headers: browserRequest().headers,
        body: { email: "a\u0000@example.com", password: "a long enough password" },
      }),
    ).rejects.toMatchObject({ statusCode: 400 });
  });
});

describe("usage", () => {
  it("pages the audit log newest first without gaps or repeats, filters it, and shows nothing of other organisations", async () => {
    const { orgId, caller } = await signedIn();
    const other = await signedIn();
    const start = Date.now() - 60 * 60 * 1000;
    const rows = Array.from({ length: 130 }, (_, i) => ({
      orgId,
      apiKeyId: i % 2 === 0 ? "key_even" : "key_odd",
      requestId: `req_${String(i).padStart(24, "0")}`,
      method: "GET",
      path: i % 3 === 0 ? "/api/v1/deals" : "/api/v1/accounts",
      query: i % 5 === 0 ? "limit=5" : null,
      status: i % 10 === 0 ? 404 : i % 7 === 0 ? 503 : 200,
      errorCode: i % 10 === 0 ? "not_found" : null,
      durationMs: i,
      // Several calls share a millisecond, as a batch does: paging must still be exact.
      createdAt: new Date(start + Math.floor(i / 4) * 1000),
    }));
    await prisma().auditLog.createMany({ data: rows });
    await prisma().auditLog.createMany({ data: rows.slice(0, 10).map((row) => ({ ...row, orgId: other.orgId })) });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await caller.usage.auditLog({ cursor, limit: 50 });
      seen.push(...page.data.map((row) => row.requestId));
      // The one list style: nextCursor is also on the last page; hasMore says whether to go on.
      cursor = page.hasMore ? (page.nextCursor ?? undefined) : undefined;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(130);
    expect(new Set(seen).size).toBe(130);
    // Newest first: the last rows inserted (latest createdAt, highest id) come first.
    expect(seen[0]).toBe("req_000000000000000000000129");
    expect(seen.at(-1)).toBe("req_000000000000000000000000");

    const all = async (filter: { status?: string; path?: string; apiKeyId?: string }) =>
      (await caller.usage.auditLog({ ...filter, limit: 100 })).data;
    expect((await all({ status: "404" })).every((row) => row.status === 404 && row.errorCode === "not_found")).toBe(
      true,
    );
    expect(await all({ status: "404" })).toHaveLength(13);
    expect(await all({ status: "5xx" })).toHaveLength(rows.filter((row) => row.status === 503).length);
    expect(await all({ status: "4xx" })).toHaveLength(13);
    expect(await all({ path: "DEALS" })).toHaveLength(rows.filter((row) => row.path.endsWith("deals")).length);
    expect(await all({ apiKeyId: "key_odd" })).toHaveLength(65);
    expect((await refusal(caller.usage.auditLog({ status: "4x" }))).code).toBe("UNPROCESSABLE_CONTENT");
    expect((await refusal(caller.usage.auditLog({ cursor: "garbage" }))).code).toBe("BAD_REQUEST");

    expect((await other.caller.usage.auditLog({ limit: 100 })).data).toHaveLength(10);
    expect((await other.caller.usage.auditLog({ apiKeyId: "key_odd", limit: 100 })).data).toHaveLength(5);
    expect(await other.caller.usage.lastDay()).toEqual({ total: 10, errors: 2 });
  });

  it("shows the plan's limits and the operator's overrides", async () => {
    const plain = await signedIn({ plan: "STARTER" });
    expect(await plain.caller.usage.limits()).toEqual({
      plan: "STARTER",
      perKey: 30,
      perOrg: 60,
      planDefaults: { perKey: 30, perOrg: 60 },
      overridden: { perKey: false, perOrg: false },
    });
    const custom = await signedIn({ plan: "SCALE", limits: { perKey: 200, perOrg: 400 } });
    expect(await custom.caller.usage.limits()).toMatchObject({
      plan: "SCALE",
      perKey: 200,
      perOrg: 400,
      planDefaults: { perKey: 120, perOrg: 240 },
      overridden: { perKey: true, perOrg: true },
    });
  });
});
