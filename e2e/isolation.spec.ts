// Tenancy in the settings area (docs/api-contract.md §1): a second organisation's user sees none of the first one's
// keys, endpoints or audit log, through the pages and through the settings tRPC door (another organisation's record is
// 404).
import { expect, test } from "@playwright/test";
import { baseUrl, callApi, createUser, screenshot, signIn, type TestUser } from "./helpers";

let first: TestUser;
let second: TestUser;

test.beforeAll(async () => {
  first = await createUser("tenant-a");
  second = await createUser("tenant-b");
});

test("a second organisation's user sees none of the first one's keys, endpoints or logs", async ({ browser, page }) => {
  // Organisation A: a key used once, and an endpoint.
  await signIn(page, first);
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("Tenant A key");
  await page.getByRole("checkbox", { name: /^accounts:read / }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const raw = (await page.getByTestId("revealed-secret").textContent()) as string;
  const keyId = (await page.getByTestId("key-card").getAttribute("aria-labelledby"))?.replace(/^key-/, "") as string;
  expect((await callApi(raw, "GET", "/accounts")).status).toBe(200);
  await page.goto("/settings/webhooks");
  await page.getByLabel("Endpoint URL").fill("https://tenant-a.example.com/hooks");
  await page.getByRole("button", { name: "Register endpoint" }).click();
  await page.getByRole("link", { name: "Open the endpoint: test it, see its deliveries" }).click();
  const endpointId = new URL(page.url()).pathname.split("/").at(-1) as string;
  expect(endpointId).toMatch(/^wh_/);
  await page.goto("/settings/usage");
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("audit-log").locator("tbody tr")).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });

  // Organisation B, in its own browser context.
  const context = await browser.newContext();
  const other = await context.newPage();
  await signIn(other, second);
  await other.goto("/settings/keys");
  await expect(other.getByRole("heading", { name: "Your keys (0)" })).toBeVisible();
  await expect(other.getByRole("main")).not.toContainText("Tenant A key");
  await other.goto("/settings/webhooks");
  await expect(other.getByRole("heading", { name: "Your endpoints (0)" })).toBeVisible();
  await expect(other.getByRole("main")).not.toContainText("tenant-a.example.com");
  await other.goto("/settings/usage");
  await expect(other.getByTestId("audit-empty")).toBeVisible();
  await screenshot(other, "usage-other-organisation");
  // Filtering by A's key id shows nothing either.
  await other.goto(`/settings/usage?key=${keyId}`);
  await expect(other.getByTestId("audit-empty")).toBeVisible();

  // A's endpoint page is "not found" for B.
  const response = await other.goto(`/settings/webhooks/${endpointId}`);
  expect(response?.status()).toBe(404);
  await expect(other.getByRole("main")).not.toContainText("tenant-a.example.com");

  // The tRPC door: B's session gets 404 for A's records and cannot revoke A's key.
  const get = await other.request.get(
    `/api/trpc/webhooks.get?input=${encodeURIComponent(JSON.stringify({ id: endpointId }))}`,
  );
  expect(get.status()).toBe(404);
  expect((await get.json()).error.message).toMatch(/not found/);
  // Every POST there carries the pages' Origin, as the door requires.
  const door = { Origin: baseUrl() };
  const revoke = await other.request.post("/api/trpc/apiKeys.revoke", { data: { id: keyId }, headers: door });
  expect(revoke.status()).toBe(404);
  const reveal = await other.request.post("/api/trpc/webhooks.revealSecret", {
    data: { id: endpointId },
    headers: door,
  });
  expect(reveal.status()).toBe(404);
  expect(await reveal.text()).not.toContain("whsec_");
  expect((await callApi(raw, "GET", "/accounts")).status).toBe(200);
  const list = await other.request.get("/api/trpc/apiKeys.list");
  expect(list.status()).toBe(200);
  expect((await list.json()).result.data).toEqual([]);
  await context.close();

  // Without a session the tRPC door answers 401; a cross-site POST is refused before anything runs.
  const anonymous = await page.request.get("/api/trpc/apiKeys.list", { headers: { Cookie: "" } });
  expect(anonymous.status()).toBe(401);
  const crossSite = await page.request.post("/api/trpc/apiKeys.revoke", {
    data: { id: keyId },
    headers: { Origin: "https://attacker.example" },
  });
  expect(crossSite.status()).toBe(403);
  const noOrigin = await page.request.post("/api/trpc/apiKeys.revoke", { data: { id: keyId } });
  expect(noOrigin.status()).toBe(403);
  expect((await callApi(raw, "GET", "/accounts")).status).toBe(200);
});
