// A team in the settings: the owner invites a developer and a viewer, both accept through their links; the developer
// creates a test key (named as its creator) and cannot create a live key or give one admin:read; the viewer creates
// nothing; the owner removes the developer with the key they created, and the developer's next page load is refused;
// the audit trail shows each step with its actor.
import { type Browser, expect, type Page, test } from "@playwright/test";
import { baseUrl, createUser, screenshot, signIn, type TestUser } from "./helpers";

let owner: TestUser;

test.beforeAll(async () => {
  owner = await createUser("team");
});

/** The error a settings form shows (not Next's route announcer, also role="alert"). */
function formError(page: Page) {
  return page.locator(".alert.error[role=alert]");
}

async function invite(page: Page, email: string, role: string): Promise<string> {
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Role", { exact: true }).selectOption(role);
  await page.getByRole("button", { name: "Send invitation" }).click();
  const link = page.getByTestId("revealed-secret");
  await expect(link).toHaveText(/\/invite\/[A-Za-z0-9]{32}$/);
  await expect(page.getByText(/valid until .* It is shown only this once/)).toBeVisible();
  await expect(page.getByRole("button", { name: "Copy" })).toBeVisible();
  return (await link.textContent()) as string;
}

/** Opens an invitation link in a fresh browser, sets a name and password, and lands in the settings. */
async function accept(browser: Browser, link: string, name: string, role: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(new URL(link).pathname);
  await expect(page.getByRole("heading", { name: `Join ${owner.slug}` })).toBeVisible();
  await expect(page.getByTestId("invitation-summary")).toContainText(owner.email);
  await expect(page.getByTestId("invitation-role")).toHaveText(role);
  await screenshot(page, `invitation-${role}`);
  await page.getByLabel("Your name").fill(name);
  await page.getByLabel("Choose a password").fill(`${name} has a long password`);
  await page.getByRole("button", { name: "Create account and join" }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await expect(page.getByTestId("org-name")).toHaveText(owner.slug);
  await expect(page.getByTestId("role")).toHaveText(role);
  return page;
}

test("an owner invites a developer and a viewer; each may do what the roles table says; removal ends access", async ({
  page,
  browser,
}) => {
  const developerEmail = `dev-${owner.slug}@example.com`;
  const viewerEmail = `viewer-${owner.slug}@example.com`;

  await signIn(page, owner);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Team" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Team" })).toBeVisible();
  const developerLink = await invite(page, developerEmail, "developer");
  await page.reload();
  // Listed without its link: email, role, expiry, who invited.
  const pending = page.getByTestId("invitations");
  await expect(pending).toContainText(developerEmail);
  expect(await page.content()).not.toContain(new URL(developerLink).pathname);
  const viewerLink = await invite(page, viewerEmail, "viewer");
  await screenshot(page, "team-invited");

  const developer = await accept(browser, developerLink, "Dana Developer", "developer");
  const viewer = await accept(browser, viewerLink, "Victor Viewer", "viewer");

  // The developer creates a test key; the live option is not offered, and the server refuses it anyway.
  await developer.goto("/settings/keys");
  await developer.getByLabel("Name", { exact: true }).fill("Developer test key");
  await developer.getByRole("checkbox", { name: /^accounts:read / }).check();
  await developer.getByRole("button", { name: "Create key" }).click();
  await expect(developer.getByTestId("revealed-secret")).toHaveText(/^msp_test_/);
  await expect(developer.getByRole("radio", { name: /Live key/ })).toBeDisabled();
  await expect(developer.getByText("Only owners and admins create live keys.")).toBeVisible();
  await expect(developer.getByRole("checkbox", { name: /^admin:read / })).toBeDisabled();
  await expect(developer.getByTestId("key-creator")).toHaveText(developerEmail);
  // Over the tRPC door (with the pages' Origin, as every POST there needs) the server refuses what the page hides.
  const door = { Origin: baseUrl() };
  const admin = await developer.request.post("/api/trpc/apiKeys.create", {
    data: { name: "Sneaky admin key", mode: "test", scopes: ["admin:read"] },
    headers: door,
  });
  expect(admin.status()).toBe(403);
  expect((await admin.json()).error.message).toBe(
    `Your role (developer) cannot give a key admin:read: ask an owner or admin of ${owner.slug}`,
  );
  const live = await developer.request.post("/api/trpc/apiKeys.create", {
    data: { name: "Sneaky live key", mode: "live", scopes: ["accounts:read"] },
    headers: door,
  });
  expect(live.status()).toBe(403);
  expect((await live.json()).error.message).toBe(
    `Your role (developer) cannot create, rotate or revoke live keys: ask an owner or admin of ${owner.slug}`,
  );
  await screenshot(developer, "keys-developer");

  // The viewer sees keys and endpoints but creates nothing.
  await viewer.goto("/settings/keys");
  await expect(viewer.getByTestId("key-card")).toContainText("Developer test key");
  await expect(viewer.getByRole("button", { name: "Create key" })).toHaveCount(0);
  await expect(viewer.getByTestId("read-only-note")).toBeVisible();
  await expect(viewer.getByText("Rotate…")).toHaveCount(0);
  await viewer.goto("/settings/webhooks");
  await expect(viewer.getByRole("button", { name: "Register endpoint" })).toHaveCount(0);
  const created = await viewer.request.post("/api/trpc/apiKeys.create", {
    data: { name: "Viewer key", mode: "test", scopes: ["accounts:read"] },
    headers: door,
  });
  expect(created.status()).toBe(403);
  const endpoint = await viewer.request.post("/api/trpc/webhooks.create", {
    data: { url: "https://hooks.example.com/viewer", events: ["*"] },
    headers: door,
  });
  expect(endpoint.status()).toBe(403);
  await viewer.goto("/settings/team");
  await expect(viewer.getByRole("button", { name: "Send invitation" })).toHaveCount(0);
  await viewer.goto("/settings/audit");
  await expect(viewer.getByTestId("forbidden")).toBeVisible();
  await screenshot(viewer, "audit-viewer-refused");

  // The owner removes the developer, revoking the key they created in the same confirmation; the developer is signed
  // out.
  await page.goto("/settings/team");
  const card = page.getByTestId("member-card").filter({ hasText: developerEmail });
  await card.getByText("Remove…").click();
  await expect(card.getByTestId("member-keys")).toContainText("Developer test key");
  await expect(card.getByRole("checkbox", { name: "Revoke these keys too" })).toBeChecked();
  await screenshot(page, "team-remove-with-keys");
  await card.getByRole("button", { name: `Remove ${developerEmail}` }).click();
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId("member-card")).toHaveCount(2);
  // Removal ends the member's sessions at once (docs/single-sign-on.md §8): the next page is the sign-in.
  await developer.goto("/settings/keys");
  await expect(developer).toHaveURL(/\/signin\?next=%2Fsettings%2Fkeys$/);
  await screenshot(developer, "removed-member");

  // The audit trail shows each step with its actor.
  await page.goto("/settings/audit");
  const trail = page.getByTestId("audit-trail");
  const row = (action: string, actor: string, target?: string) =>
    trail
      .locator(`tr[data-action="${action}"]`)
      .filter({ hasText: actor })
      .filter({ hasText: target ?? "" });
  await expect(row("invitation.created", owner.email, developerEmail)).toHaveCount(1);
  await expect(row("invitation.created", owner.email, viewerEmail)).toHaveCount(1);
  await expect(row("invitation.accepted", developerEmail)).toHaveCount(1);
  await expect(row("invitation.accepted", viewerEmail)).toHaveCount(1);
  await expect(row("apiKey.created", developerEmail, "Developer test key")).toHaveCount(1);
  await expect(row("action.refused", developerEmail, "Sneaky live key")).toHaveCount(1);
  await expect(row("action.refused", developerEmail, "Sneaky admin key")).toHaveCount(1);
  await expect(row("apiKey.revoked", owner.email, "Developer test key")).toHaveCount(1);
  await expect(row("action.refused", viewerEmail)).toHaveCount(3);
  await expect(row("member.removed", owner.email, developerEmail)).toHaveCount(1);
  await screenshot(page, "audit-trail");

  // Filtered by actor, only the viewer's entries remain.
  await page.getByLabel("Actor").selectOption({ label: viewerEmail });
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(trail.locator("tbody tr")).toHaveCount(4);
  await expect(trail.locator("tbody tr").filter({ hasNotText: viewerEmail })).toHaveCount(0);

  // A refusal in a form says what the role cannot do.
  await page.goto("/settings/team");
  await page.getByLabel("Email", { exact: true }).fill(owner.email);
  await page.getByRole("button", { name: "Send invitation" }).click();
  await expect(formError(page)).toHaveText("This person is already a member");
});
