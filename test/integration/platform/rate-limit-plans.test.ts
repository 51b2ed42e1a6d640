// Plans and their limits (docs/api-contract.md §8): the windows a key gets per plan, and the Pro / Enterprise range
// (120–300 per key, 240–600 per organisation) enforced wherever limits are set for a PRO organisation.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RateLimitPlan } from "../../../server/db/generated/client";
import { prisma } from "../../../server/db/transaction";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { createApiKey } from "../../../server/platform/api-keys/service";
import { ensureOrganisation } from "../../../server/platform/organisations";
import { admin } from "../../helpers/admin";
import { client, startApi, type TestServer } from "../../helpers/api";

const slug = () => `plan-${randomBytes(5).toString("hex")}`;

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

async function firstResponse(plan: RateLimitPlan, limits?: { perKey: number; perOrg: number }) {
  const org = await ensureOrganisation(slug(), { plan, limits });
  const { raw } = await createApiKey(org.id, { name: "plan", scopes: FULL_ACCESS_SCOPES, isTest: false });
  return client(server.url, raw)("GET", "/accounts");
}

it.each([
  ["STARTER", "30"],
  ["GROWTH", "60"],
  ["SCALE", "120"],
  ["PRO", "120"],
] as const)("a %s key reports its per-key window (%s/min) on its first request", async (plan, limit) => {
  const res = await firstResponse(plan);
  expect(res.status).toBe(200);
  expect(res.headers.get("x-ratelimit-limit")).toBe(limit);
  expect(res.headers.get("x-ratelimit-remaining")).toBe(String(Number(limit) - 1));
});

it("a PRO organisation's configured limits apply", async () => {
  const res = await firstResponse("PRO", { perKey: 300, perOrg: 600 });
  expect(res.headers.get("x-ratelimit-limit")).toBe("300");
});

it.each([
  [{ perKey: 119, perOrg: 240 }, [["limits", "perKey"]]],
  [{ perKey: 301, perOrg: 600 }, [["limits", "perKey"]]],
  [{ perKey: 120, perOrg: 239 }, [["limits", "perOrg"]]],
  [
    { perKey: 1_000, perOrg: 2_000 },
    [
      ["limits", "perKey"],
      ["limits", "perOrg"],
    ],
  ],
])("PRO with limits %o is refused with 422 validation_error and nothing is written", async (limits, paths) => {
  const name = slug();
  const refused = await ensureOrganisation(name, { plan: "PRO", limits }).catch((error: unknown) => error);
  expect(refused).toMatchObject({ code: "validation_error", status: 422 });
  expect((refused as { details: { path: string[] }[] }).details.map((detail) => detail.path)).toEqual(paths);
  expect(await prisma().organisation.findUnique({ where: { slug: name } })).toBeNull();
});

it("the range holds for an existing PRO organisation, and when moving an organisation with overrides onto PRO", async () => {
  const pro = slug();
  await ensureOrganisation(pro, { plan: "PRO", limits: { perKey: 120, perOrg: 240 } });
  await expect(ensureOrganisation(pro, { limits: { perKey: 500, perOrg: 600 } })).rejects.toMatchObject({
    code: "validation_error",
  });
  expect(await ensureOrganisation(pro, { limits: { perKey: 200, perOrg: 400 } })).toMatchObject({
    plan: "PRO",
    rateLimitPerKey: 200,
    rateLimitPerOrg: 400,
  });

  // Operator overrides on other plans are explicit choices, not bounded by the Pro range.
  const scale = slug();
  expect(await ensureOrganisation(scale, { plan: "SCALE", limits: { perKey: 5_000, perOrg: 10_000 } })).toMatchObject({
    rateLimitPerKey: 5_000,
  });
  await expect(ensureOrganisation(scale, { plan: "PRO" })).rejects.toMatchObject({ code: "validation_error" });
  expect(await ensureOrganisation(scale, { plan: "PRO", limits: { perKey: 150, perOrg: 300 } })).toMatchObject({
    plan: "PRO",
    rateLimitPerKey: 150,
  });
});

it("the admin command refuses --plan pro with --limits outside the range", { timeout: 60_000 }, async () => {
  const name = slug();
  const refused = await admin(
    "create-key",
    "--org",
    name,
    "--scopes",
    "accounts:read",
    "--plan",
    "pro",
    "--limits",
    "100,200",
  ).catch((error: unknown) => error);
  expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining("Pro plan perKey must be 120 to 300") });
  expect(await prisma().organisation.findUnique({ where: { slug: name } })).toBeNull();
});
