// API keys page: create a test key with two scopes, read it once, use it from the test against /api/v1,
// rotate, revoke; deprecated scopes; then the usage page's audit log shows the calls just made.
import { expect, type Page, test } from "@playwright/test";
import { callApi, createUser, screenshot, signIn, type TestUser } from "./helpers";

let user: TestUser;

test.beforeAll(async () => {
  user = await createUser("keys");
});

/** The error a settings form shows (not Next's route announcer, also role="alert"). */
function formError(page: Page) {
  return page.locator(".alert.error[role=alert]");
}

async function createKey(page: Page, name: string, mode: "test" | "live", scopes: string[]) {
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel(mode === "test" ? /Test key/ : /Live key/).check();
  for (const scope of scopes) await page.getByRole("checkbox", { name: new RegExp(`^${scope} `) }).check();
  await page.getByRole("button", { name: "Create key" }).click();
}

test("create a test key, use it once shown, rotate and revoke it, and see the calls in the audit log", async ({
  page,
}) => {
  await signIn(page, user);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "API keys" }).click();
  await expect(page.getByRole("heading", { name: "Your keys (0)" })).toBeVisible();

  await createKey(page, "PSA sync", "test", ["accounts:read", "contacts:write"]);
  const secret = page.getByTestId("revealed-secret");
  await expect(secret).toHaveText(/^msp_test_[0-9A-Za-z]{40}$/);
  const raw = (await secret.textContent()) as string;
  await expect(page.getByText("shown only this once")).toBeVisible();
  await expect(page.getByRole("button", { name: "Copy" })).toBeVisible();
  // Rotation adds a second card with the same name: find this one by its prefix.
  const card = page.getByTestId("key-card").filter({ hasText: `${raw.slice(0, 13)}…` });
  await expect(card).toContainText("PSA sync");
  await expect(card).toContainText("accounts:read");
  await expect(card).toContainText("contacts:write (+ contacts:read)");
  await expect(card.locator(".badge", { hasText: "test" })).toBeVisible();
  await screenshot(page, "keys-created");

  // The key works within its scopes: accounts:read → 200, contacts:write implies contacts:read → 200,
  // deals:read is not granted → 403.
  const accounts = await callApi(raw, "GET", "/accounts?limit=1");
  expect(accounts.status).toBe(200);
  expect((await callApi(raw, "GET", "/contacts?limit=1")).status).toBe(200);
  const deals = await callApi(raw, "GET", "/deals");
  expect(deals.status).toBe(403);
  expect(deals.body.error?.code).toBe("insufficient_scope");
  expect((await callApi(raw, "POST", "/accounts", { name: "Not allowed" })).status).toBe(403);

  // Shown once: a reload no longer contains it.
  await page.reload();
  await expect(page.getByRole("heading", { name: "Your keys (1)" })).toBeVisible();
  expect(await page.content()).not.toContain(raw);
  // "Last used" is refreshed off the response path: poll until it shows a time.
  await expect(async () => {
    await page.reload();
    await expect(card.locator("dd").nth(3)).toHaveText(/UTC$/, { timeout: 1_000 });
  }).toPass({ timeout: 15_000 });

  // Rotate: a new key with the same name and scopes; the old one keeps working for 24 hours.
  await card.getByText("Rotate…").click();
  await card.getByRole("button", { name: "Rotate “PSA sync”" }).click();
  const rotated = card.getByTestId("revealed-secret");
  await expect(rotated).toHaveText(/^msp_test_/);
  const successor = (await rotated.textContent()) as string;
  expect(successor).not.toBe(raw);
  await expect(card).toContainText("the old key keeps working until");
  await expect(card.locator(".badge.warn")).toHaveText(/rotated: expires in 2[34] h/);
  expect((await callApi(raw, "GET", "/accounts?limit=1")).status).toBe(200);
  expect((await callApi(successor, "GET", "/accounts?limit=1")).status).toBe(200);
  expect((await callApi(successor, "GET", "/deals")).status).toBe(403);
  await expect(page.getByRole("heading", { name: "Your keys (2)" })).toBeVisible();

  // Revoke the old key: 401 from now on; the successor still works.
  await card.getByText("Revoke…").click();
  await card.getByRole("button", { name: "Revoke “PSA sync”" }).click();
  await expect(card).toContainText("Key revoked");
  await expect(card.locator(".badge.error")).toHaveText("revoked");
  const refused = await callApi(raw, "GET", "/accounts?limit=1");
  expect(refused.status).toBe(401);
  expect(refused.body.error?.code).toBe("unauthorized");
  expect((await callApi(successor, "GET", "/accounts?limit=1")).status).toBe(200);
  await screenshot(page, "keys-rotated-revoked");

  // Usage: the audit log shows the 8 calls made with the organisation's keys (the one with the revoked key is
  // anonymous: no organisation owns an invalid key). Rows are written in batches up to 250 ms later, so poll.
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Usage" }).click();
  await expect(page.getByTestId("plan")).toHaveText("starter");
  const log = page.getByTestId("audit-log");
  await expect(async () => {
    await page.reload();
    await expect(log.locator("tbody tr")).toHaveCount(8, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await expect(log.locator("tbody tr").filter({ hasText: "GET /api/v1/deals" }).first()).toContainText(
    "403 insufficient_scope",
  );
  await expect(log.locator("tbody tr").filter({ hasText: "POST /api/v1/accounts" })).toContainText("403");
  await screenshot(page, "usage");

  // Filters: status class, exact status, path, key.
  await page.getByLabel("Status").selectOption("4xx");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page).toHaveURL(/status=4xx/);
  await expect(log.locator("tbody tr")).toHaveCount(3);
  await page.getByLabel("Status").selectOption("");
  await page.getByLabel("Path contains").fill("/deals");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(log.locator("tbody tr")).toHaveCount(2);
  await page.getByLabel("Path contains").fill("");
  const successorPrefix = successor.slice(0, 13);
  await page.getByLabel("Key").selectOption({ label: `PSA sync (${successorPrefix}…)` });
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(log.locator("tbody tr")).toHaveCount(3);
  await expect(log).not.toContainText(raw.slice(0, 13));
  await page.getByLabel("Status").selectOption("500");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await expect(page.getByTestId("audit-empty")).toHaveText("No calls match these filters.");
});

test("deprecated scopes follow docs/api-contract.md §5.8 in the form", async ({ page }) => {
  await signIn(page, user);
  await page.goto("/settings/keys");

  await page.getByText("Deprecated scopes").click();
  await createKey(page, "Old reconciliation", "live", ["reconciliation:read"]);
  await expect(formError(page)).toHaveText(
    "Scope reconciliation:read refused: reconciliation scopes are deprecated and can no longer be granted",
  );
  // What was typed and ticked is kept.
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Old reconciliation");
  await expect(page.getByRole("checkbox", { name: /^reconciliation:read / })).toBeChecked();
  await expect(page.getByLabel(/Live key/)).toBeChecked();

  await page.getByRole("checkbox", { name: /^reconciliation:read / }).uncheck();
  await page.getByRole("checkbox", { name: /^onboarding:read / }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(formError(page)).toHaveText(
    "Scope onboarding:read refused: onboarding:read is dead: no endpoint uses it",
  );

  await page.getByRole("checkbox", { name: /^onboarding:read / }).uncheck();
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(formError(page)).toHaveText("At least one scope is required");

  await page.getByRole("checkbox", { name: /^contracts:read / }).check();
  await page.getByRole("checkbox", { name: /^admin:read / }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = page.getByTestId("revealed-secret");
  await expect(secret).toHaveText(/^msp_live_/);
  await expect(page.locator(".reveal")).toContainText("contracts:read is accepted but grants nothing");
  const card = page.getByTestId("key-card").filter({ hasText: "Old reconciliation" });
  await expect(card).toContainText("contracts:read (grants nothing)");
  await expect(card).toContainText("admin:read (+ every :read scope)");
  const key = (await secret.textContent()) as string;
  expect((await callApi(key, "GET", "/deals")).status).toBe(200);
  expect((await callApi(key, "POST", "/accounts", { name: "Read only" })).status).toBe(403);
});

test("an organisation service key is marked as one in the list", async ({ page }) => {
  await signIn(page, user);
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("RMM import");
  await page.getByRole("checkbox", { name: /^accounts:read / }).check();
  await page.getByRole("checkbox", { name: /^Organisation service key/ }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  await expect(page.getByText("Created test organisation service key “RMM import”")).toBeVisible();
  const card = page.getByTestId("key-card").filter({ hasText: "RMM import" });
  await expect(card.getByTestId("service-key")).toHaveText("service key");
});
