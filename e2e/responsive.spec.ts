// Every settings page at 375 px wide, the team, security, audit, confirmation and invitation pages included: no
// horizontal scrolling of the page, every form control named, the skip link first in the tab order; screenshots under
// e2e/artifacts/.
import { expect, type Page, test } from "@playwright/test";
import { callApi, createUser, screenshot, signIn, startReceiver, type TestUser } from "./helpers";

let user: TestUser;

test.use({ viewport: { width: 375, height: 812 } });

test.beforeAll(async () => {
  user = await createUser("mobile");
});

async function checkPage(page: Page, name: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
  for (const control of await page
    .locator("input:not([type=hidden]), select, textarea")
    .filter({ visible: true })
    .all()) {
    await expect(control).toHaveAccessibleName(/\S/);
  }
  await screenshot(page, `mobile-${name}`);
}

test("the settings pages fit a 375 px screen and every control has a label", async ({ page }) => {
  await page.goto("/signin");
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await checkPage(page, "signin");

  await signIn(page, user);
  await checkPage(page, "overview");

  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("Phone key with a rather long name to wrap");
  await page.getByRole("checkbox", { name: /^accounts:write / }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("revealed-secret").textContent()) as string;
  await checkPage(page, "keys");
  expect((await callApi(key, "GET", "/accounts?limit=1&sort=name:asc")).status).toBe(200);

  const receiver = await startReceiver();
  try {
    await page.goto("/settings/webhooks");
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/a-rather-long-path/that/should/wrap/on/a/phone`);
    await page.getByRole("button", { name: "Register endpoint" }).click();
    await expect(page.getByTestId("revealed-secret")).toBeVisible();
    await checkPage(page, "webhooks");
    await page.getByRole("link", { name: "Open the endpoint: test it, see its deliveries" }).click();
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect(page.getByTestId("deliveries").locator("tbody tr")).toHaveCount(1);
    await checkPage(page, "webhook-endpoint");
  } finally {
    await receiver.close();
  }

  await page.goto("/settings/usage");
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("audit-log").locator("tbody tr")).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await checkPage(page, "usage");

  await page.goto("/settings/team");
  await page.getByLabel("Email", { exact: true }).fill(`phone-invitee-${user.slug}@example.com`);
  await page.getByRole("button", { name: "Send invitation" }).click();
  const link = (await page.getByTestId("revealed-secret").textContent()) as string;
  await checkPage(page, "team");
  await page.goto("/settings/security");
  await checkPage(page, "security");
  await page.goto("/settings/audit");
  await expect(page.getByTestId("audit-trail")).toBeVisible();
  await checkPage(page, "audit");
  await page.goto("/settings/confirm?next=%2Fsettings%2Fkeys");
  await checkPage(page, "confirm");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.goto(new URL(link).pathname);
  await checkPage(page, "invitation");
});
