// The pages a user meets, at 1280 and 390 px wide: every settings page, sign-in, an invitation, a password reset and
// the docs scroll no wider than the screen and name every control, and the settings bar (navigation and who is
// signed in) is as tall on every settings page; tables fit at 1280 px; the favicon answers; a viewer's overview offers
// only what a viewer may do; the sessions list shows an address as the audit trail does; a refused invitation
// password is explained beside its field. Screenshots under e2e/artifacts/<width>-<page>.png.
import { expect, type Page, test } from "@playwright/test";
import {
  addMember,
  admin,
  baseUrl,
  callApi,
  continueWithEmail,
  createUser,
  inviteLink,
  screenshot,
  signIn,
  startReceiver,
  type TestUser,
} from "./helpers";

const WIDTHS = [1280, 390] as const;

let owner: TestUser;

test.beforeAll(async () => {
  owner = await createUser("pages");
});

/**
 * No sideways scrolling, every visible form control named; then a screenshot `<width>-<name>`, of the whole page unless
 * `fullPage` is false (the API reference is thousands of pixels tall).
 */
async function checkPage(page: Page, name: string, fullPage = true): Promise<void> {
  const { innerWidth, scrollWidth } = await page.evaluate(() => ({
    innerWidth: window.innerWidth,
    scrollWidth: document.documentElement.scrollWidth,
  }));
  expect(scrollWidth, `${name} at ${innerWidth} px scrolls sideways`).toBeLessThanOrEqual(innerWidth);
  // No site link is cut off at the screen's edge (a header scrolling sideways on its own would hide some).
  const cut = await page
    .getByRole("navigation", { name: "Site" })
    .getByRole("link")
    .evaluateAll((links) =>
      links.filter((link) => link.getBoundingClientRect().right > window.innerWidth).map((link) => link.textContent),
    );
  expect(cut, `${name} at ${innerWidth} px: site links past the edge`).toEqual([]);
  for (const control of await page
    .locator("input:not([type=hidden]), select, textarea")
    .filter({ visible: true })
    .all()) {
    await expect(control).toHaveAccessibleName(/\S/);
  }
  await screenshot(page, `${innerWidth}-${name}`, fullPage);
}

/** By how many pixels each table wider than its frame overflows it (empty when every table fits). */
async function tableOverflow(page: Page): Promise<number[]> {
  return page
    .locator(".table-wrap")
    .evaluateAll((frames) =>
      frames.map((frame) => frame.scrollWidth - frame.clientWidth).filter((overflow) => overflow > 0),
    );
}

/** The settings bar's height and the width of each of its navigation links, by label. */
async function settingsBar(page: Page): Promise<{ height: number; links: Record<string, number> }> {
  return page.evaluate(() => {
    const bar = document.querySelector(".settings-bar") as HTMLElement;
    const links = [...bar.querySelectorAll<HTMLAnchorElement>("nav a")].map(
      (link) => [link.textContent ?? "", link.getBoundingClientRect().width] as const,
    );
    return { height: bar.getBoundingClientRect().height, links: Object.fromEntries(links) };
  });
}

test("every settings page fits at 1280 and 390 px, names its controls and keeps the settings bar's height", async ({
  page,
}) => {
  await signIn(page, owner);
  // Something on every page: a key (and a call with it), an endpoint with a delivery, an invitation.
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("Phone key with a rather long name to wrap");
  await page.getByRole("checkbox", { name: /^accounts:write / }).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("revealed-secret").textContent()) as string;
  expect((await callApi(key, "GET", "/accounts?limit=1&sort=name:asc")).status).toBe(200);
  const receiver = await startReceiver();
  let endpointPath: string;
  try {
    await page.goto("/settings/webhooks");
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/a-rather-long-path/that/should/wrap/on/a/phone`);
    await page.getByRole("button", { name: "Register endpoint" }).click();
    await expect(page.getByTestId("revealed-secret")).toBeVisible();
    await page.getByRole("link", { name: "Open the endpoint: test it, see its deliveries" }).click();
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect(page.getByTestId("deliveries").locator("tbody tr")).toHaveCount(1);
    endpointPath = new URL(page.url()).pathname;
  } finally {
    await receiver.close();
  }
  await page.goto("/settings/team");
  await page.getByLabel("Email", { exact: true }).fill(`invitee-${owner.slug}@example.com`);
  await page.getByRole("button", { name: "Send invitation" }).click();
  await expect(page.getByTestId("revealed-secret")).toBeVisible();
  await page.goto("/settings/fields");
  await page.getByLabel("Label", { exact: true }).fill("A custom field with a long label to wrap on a phone");
  await page.getByLabel("Key").fill("long_label");
  await page.getByRole("button", { name: "Add field" }).click();
  await expect(page.getByTestId("field-card")).toHaveCount(1);
  await page.goto("/settings/usage");
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("audit-log").locator("tbody tr")).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });

  const pages: Record<string, string> = {
    overview: "/settings",
    keys: "/settings/keys",
    webhooks: "/settings/webhooks",
    "webhook-endpoint": endpointPath,
    fields: "/settings/fields",
    usage: "/settings/usage",
    team: "/settings/team",
    security: "/settings/security",
    sso: "/settings/security/sso",
    audit: "/settings/audit",
    confirm: "/settings/confirm?next=%2Fsettings%2Fkeys",
  };
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    const bars: Record<string, Awaited<ReturnType<typeof settingsBar>>> = {};
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(path);
      await checkPage(page, name);
      // Tables scroll inside their frame on a phone, never on a desktop screen.
      if (width === 1280) expect(await tableOverflow(page), `${name}: a table wider than its frame`).toEqual([]);
      bars[name] = await settingsBar(page);
    }
    // The current section is bold: its link must not widen and rewrap the bar on its own page.
    const overview = bars.overview as Awaited<ReturnType<typeof settingsBar>>;
    for (const [name, bar] of Object.entries(bars)) {
      expect(bar.height, `the settings bar's height on ${name} at ${width} px`).toBe(overview.height);
      expect(bar.links, `the settings links' widths on ${name} at ${width} px`).toEqual(overview.links);
    }
  }
});

test("sign-in, an invitation, a password reset and the docs fit at 1280 and 390 px", async ({ page }) => {
  const invitation = new URL(await inviteLink(owner)).pathname;
  const reset = await admin<{ link: string }>("reset-password", "--email", owner.email);
  const pages: Record<string, string> = {
    signin: "/signin",
    invitation,
    "reset-password": `${new URL(reset.link).pathname}${new URL(reset.link).search}`,
    docs: "/docs",
    "docs-errors": "/docs/errors",
    "docs-webhooks": "/docs/webhooks",
    "docs-sync": "/docs/sync",
    "docs-sdk": "/docs/sdk",
  };
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(path);
      if (name === "docs") {
        await expect(page.getByRole("heading", { name: "MSP CRM Public API" })).toBeVisible({ timeout: 30_000 });
      }
      await checkPage(page, name, name !== "docs");
    }
    await page.goto("/signin");
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    await expect(skip).toBeFocused();
    await expect(skip).toBeInViewport();
    // The password form's button and the passkey button under it do not touch.
    await continueWithEmail(page, owner.email);
    const signInBox = await page.getByRole("button", { name: "Sign in", exact: true }).boundingBox();
    const passkeyBox = await page.getByRole("button", { name: "Sign in with a passkey" }).boundingBox();
    expect((passkeyBox?.y ?? 0) - ((signInBox?.y ?? 0) + (signInBox?.height ?? 0))).toBeGreaterThanOrEqual(12);
  }
  // The error reference speaks the contract's language to integrators, not the code's.
  await page.goto("/docs/errors");
  await expect(page.locator("main")).not.toContainText(
    /contract|extension|IETF|draft-|sliding window|schema|\.tsx?\b/i,
  );
});

test("/favicon.ico and the icons the pages link answer with an image", async ({ page, request }) => {
  const ico = await request.get("/favicon.ico");
  expect(ico.status()).toBe(200);
  expect(ico.headers()["content-type"]).toMatch(/^image\//);
  expect([...(await ico.body()).subarray(0, 4)]).toEqual([0, 0, 1, 0]);
  await page.goto("/signin");
  const icons = await page
    .locator("link[rel~=icon]")
    .evaluateAll((links) => links.map((link) => (link as HTMLLinkElement).href));
  expect(icons.length).toBeGreaterThan(0);
  for (const href of icons) {
    const icon = await request.get(href);
    expect(icon.status(), href).toBe(200);
    expect(icon.headers()["content-type"], href).toMatch(/^image\//);
  }
});

test("a viewer's overview offers only what a viewer may do (docs/api-contract.md §5.10)", async ({ browser }) => {
  const viewer = await addMember(owner, "viewer");
  for (const [member, offered] of [
    [owner, true],
    [viewer, false],
  ] as const) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, member);
    const start = page.locator("ol.steps");
    await expect(start.getByRole("link", { name: "Create a test key" })).toHaveCount(offered ? 1 : 0);
    await expect(start.getByRole("link", { name: "Register a webhook endpoint" })).toHaveCount(offered ? 1 : 0);
    await expect(page.getByRole("link", { name: "Manage keys" })).toHaveCount(offered ? 1 : 0);
    await expect(page.getByRole("link", { name: "Manage endpoints" })).toHaveCount(offered ? 1 : 0);
    // The usage card leads to the usage page, and to the audit trail for the roles that may read it.
    await expect(page.getByRole("link", { name: "See the usage" })).toHaveAttribute("href", "/settings/usage");
    const audit = page.getByRole("link", { name: "See the audit trail" });
    if (offered) await expect(audit).toHaveAttribute("href", "/settings/audit");
    else await expect(audit).toHaveCount(0);
    if (!offered) {
      await expect(start).toContainText("Ask an owner, admin or developer");
      await expect(page.getByRole("link", { name: "See the keys" })).toBeVisible();
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await checkPage(page, "overview-viewer");
      }
    }
    await context.close();
  }
});

test("the sessions list shows a client address as the audit trail does, and fits at 1280 px", async ({ browser }) => {
  // Over IPv6 loopback, which better-auth would store cut to its /64 as 0000:0000:…:0000.
  const origin = `http://[::1]:${new URL(baseUrl()).port}`;
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, owner, origin);
  await page.goto(`${origin}/settings/security`);
  const session = page.getByTestId("sessions").locator("tbody tr").filter({ hasText: "this browser" });
  const sessionAddress = session.locator("td").nth(1);
  await expect(sessionAddress).toHaveText("::1");
  expect(await tableOverflow(page)).toEqual([]);
  await page.goto(`${origin}/settings/audit`);
  const signInRow = page.getByTestId("audit-trail").locator('tbody tr[data-action="signin.succeeded"]').first();
  await expect(signInRow.locator("td").nth(4)).toHaveText("::1");
  await page.goto(`${origin}/settings/security`);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await checkPage(page, "security-ipv6");
  }
  await context.close();
});

test("a too-short invitation password is refused by the server and explained beside the field", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(new URL(await inviteLink(owner)).pathname);
  // As if the browser did not check minlength itself: the server's refusal is what the user reads.
  await page
    .locator("form")
    .filter({ has: page.getByLabel("Choose a password") })
    .evaluate((form) => {
      (form as HTMLFormElement).noValidate = true;
    });
  await page.getByLabel("Your name").fill("Iris Invitee");
  await page.getByLabel("Choose a password").fill("short");
  await page.getByRole("button", { name: "Create account and join" }).click();
  const password = page.getByLabel("Choose a password");
  const field = page.locator(".field").filter({ has: password });
  await expect(field.getByRole("alert")).toHaveText("Password must be at least 10 characters");
  await expect(password).toHaveAttribute("aria-invalid", "true");
  await expect(password).toHaveAccessibleDescription(/Password must be at least 10 characters/);
  await expect(page.getByLabel("Your name")).toHaveValue("Iris Invitee");
  // Said once, beside the field, not again under the button.
  await expect(page.getByText("Password must be at least 10 characters")).toHaveCount(1);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await checkPage(page, "invitation-refused");
  }
  await context.close();
});
