// Custom fields in the settings: an owner adds a select field to accounts, changes its label and options (one archived,
// one added), the API then takes the new option and refuses the archived one, and the owner archives the field; a
// viewer of the same organisation sees the fields and no control to change them.
import { expect, type Page, test } from "@playwright/test";
import { admin, callApi, createUser, screenshot, signIn, type TestUser } from "./helpers";

let owner: TestUser;

test.beforeAll(async () => {
  owner = await createUser("fields");
});

/** The card of one field on the page, by its label. */
function card(page: Page, label: string) {
  return page.getByTestId("field-card").filter({ has: page.getByRole("heading", { name: label, exact: true }) });
}

test("an owner adds, changes and archives a field; a viewer sees it read-only", async ({ page, browser }) => {
  await signIn(page, owner);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Custom fields" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Custom fields" })).toBeVisible();
  await expect(page.getByText("No custom fields on accounts yet.")).toBeVisible();

  const form = page.getByRole("region", { name: "Add a field" });
  await form.getByLabel("Records").selectOption("account");
  await form.getByLabel("Label", { exact: true }).fill("Contract tier");
  await form.getByLabel("Key").fill("contract_tier");
  await form.getByLabel("Type").selectOption("select");
  await form.getByLabel(/^Options/).fill("gold | Gold\nsilver | Silver");
  await form.getByRole("checkbox", { name: "Searchable" }).check();
  await form.getByRole("button", { name: "Add field" }).click();
  await expect(page.getByText("Field Contract tier (customFields.contract_tier) added to accounts.")).toBeVisible();
  const tier = card(page, "Contract tier");
  await expect(tier).toContainText("customFields.contract_tier");
  await expect(tier).toContainText("searchable");
  await expect(page.getByRole("heading", { name: "Accounts (1 of 100)" })).toBeVisible();

  // A key the API would refuse is refused here with the service's reason.
  await form.getByLabel("Label", { exact: true }).fill("Duplicate");
  await form.getByLabel("Key").fill("contract_tier");
  await form.getByRole("button", { name: "Add field" }).click();
  await expect(form.locator(".alert.error[role=alert]")).toContainText("already the key of a custom field of accounts");

  await tier.getByText("Edit Contract tier…").click();
  await tier.getByLabel("Label", { exact: true }).fill("Tier");
  await tier
    .getByRole("checkbox", { name: /^Archived/ })
    .nth(1)
    .check();
  await tier.getByLabel("New options").fill("platinum | Platinum");
  await tier.getByRole("button", { name: "Save Contract tier" }).click();
  await expect(page.getByText("Field Tier saved.")).toBeVisible();
  await page.reload();
  const renamed = card(page, "Tier");
  await expect(renamed).toContainText("platinum Platinum");
  await expect(renamed).toContainText("silver Silver (archived)");
  await screenshot(page, "custom-fields");

  const { key } = await admin<{ key: string }>(
    "create-key",
    "--org",
    owner.slug,
    "--scopes",
    "accounts:write,custom_fields:read",
  );
  const created = await callApi(key, "POST", "/accounts", {
    name: "Tiered",
    customFields: { contract_tier: "platinum" },
  });
  expect(created.status).toBe(201);
  expect((created.body.data as { customFields: unknown }).customFields).toEqual({ contract_tier: "platinum" });
  expect(
    (await callApi(key, "POST", "/accounts", { name: "Old", customFields: { contract_tier: "silver" } })).status,
  ).toBe(422);

  await renamed.getByText("Archive…").click();
  await renamed.getByRole("button", { name: "Archive Tier" }).click();
  await expect(page.getByText(/Field Tier archived/)).toBeVisible();
  await page.reload();
  await expect(card(page, "Tier")).toContainText("archived");
  await expect(page.getByRole("heading", { name: "Accounts (0 of 100)" })).toBeVisible();
  const account = await callApi(key, "GET", `/accounts/${(created.body.data as { id: string }).id}`);
  expect((account.body.data as { customFields: unknown }).customFields).toEqual({});

  // A viewer of the organisation sees the fields, read-only.
  await form.getByLabel("Label", { exact: true }).fill("Seats");
  await form.getByLabel("Key").fill("seats");
  await form.getByLabel("Type").selectOption("number");
  await form.getByRole("button", { name: "Add field" }).click();
  await expect(card(page, "Seats")).toBeVisible();
  const viewer = {
    email: `viewer-${owner.slug}@example.com`,
    password: "viewer has a long password",
    slug: owner.slug,
  };
  await admin(
    "create-user",
    "--org",
    owner.slug,
    "--email",
    viewer.email,
    "--role",
    "viewer",
    "--password",
    viewer.password,
  );
  const context = await browser.newContext();
  const viewerPage = await context.newPage();
  await signIn(viewerPage, viewer);
  await viewerPage.goto("/settings/fields");
  await expect(viewerPage.getByTestId("read-only-note")).toContainText("Your role (viewer) can see custom fields");
  await expect(card(viewerPage, "Seats")).toContainText("customFields.seats");
  await expect(card(viewerPage, "Tier")).toContainText("archived");
  await expect(viewerPage.getByRole("button", { name: "Add field" })).toHaveCount(0);
  await expect(viewerPage.getByText(/^Edit /)).toHaveCount(0);
  await expect(viewerPage.getByText("Archive…")).toHaveCount(0);
  await screenshot(viewerPage, "custom-fields-viewer");
  await context.close();
});
