// Sign-in, session cookie and sign-out of the settings area (better-auth), with and without JavaScript.
import { expect, test } from "@playwright/test";
import { continueWithEmail, createUser, SESSION_COOKIE, screenshot, signIn, type TestUser } from "./helpers";

let user: TestUser;

test.beforeAll(async () => {
  user = await createUser("auth");
});

test("the settings redirect to sign-in, a wrong password is refused, the right one opens the overview", async ({
  page,
  context,
}) => {
  await page.goto("/settings/keys");
  await expect(page).toHaveURL(/\/signin\?next=%2Fsettings%2Fkeys$/);
  await expect(page.getByRole("heading", { name: "Sign in to the settings" })).toBeVisible();
  await screenshot(page, "signin");

  // Email first: an address outside single sign-on goes on to the password.
  await continueWithEmail(page, user.email);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.locator(".alert.error[role=alert]")).toHaveText("Email or password is incorrect");
  // The email typed is kept; the password is not.
  await expect(page.getByLabel("Email")).toHaveValue(user.email);
  await expect(page.getByLabel("Password")).toHaveValue("");

  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(/\/settings\/keys$/);
  await expect(page.getByRole("heading", { level: 1, name: "API keys" })).toBeVisible();

  const cookies = await context.cookies();
  const session = cookies.find((cookie) => cookie.name === SESSION_COOKIE);
  expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false, path: "/" });
  // better-auth's token with its HMAC signature (the database holds the token, never the signature).
  expect(decodeURIComponent(session?.value ?? "")).toMatch(/^[A-Za-z0-9]{32}\.[A-Za-z0-9+/]{43}=$/);
  // About seven days.
  const days = ((session?.expires ?? 0) * 1000 - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(6.9);
  expect(days).toBeLessThan(7.1);

  await page.goto("/settings");
  await expect(page.getByRole("heading", { level: 1, name: user.slug })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Get started" })).toBeVisible();
  await screenshot(page, "overview-first-sign-in");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin\?signedOut=1$/);
  await expect(page.getByText("You are signed out.")).toBeVisible();
  expect((await context.cookies()).find((cookie) => cookie.name === SESSION_COOKIE)).toBeUndefined();
  await page.goto("/settings");
  await expect(page).toHaveURL(/\/signin/);
});

test("a signed-out session cookie no longer works", async ({ page, context, browser }) => {
  await signIn(page, user);
  const stolen = (await context.cookies()).find((cookie) => cookie.name === SESSION_COOKIE);
  expect(stolen).toBeDefined();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);

  // Replaying the old cookie in a fresh browser context gets the sign-in page: the session row is gone.
  const other = await browser.newContext();
  await other.addCookies([{ ...(stolen as NonNullable<typeof stolen>) }]);
  const replay = await other.newPage();
  await replay.goto("/settings");
  await expect(replay).toHaveURL(/\/signin/);
  await other.close();
});

test("after 10 attempts for one email from one browser the page says how long to wait, even for the right password", async ({
  page,
}) => {
  const locked = await createUser("locked");
  await page.goto("/signin");
  await continueWithEmail(page, locked.email);
  // Each attempt is one server action: wait for its answer before the next (the message stays the same).
  const attempt = async (password: string) => {
    await page.getByLabel("Email").fill(locked.email);
    await page.getByLabel("Password").fill(password);
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === "POST"),
      page.getByRole("button", { name: "Sign in", exact: true }).click(),
    ]);
  };
  for (let i = 0; i < 10; i++) {
    await attempt(`wrong password ${i}`);
    await expect(page.locator(".alert.error[role=alert]")).toHaveText("Email or password is incorrect");
  }
  await attempt(locked.password);
  await expect(page.locator(".alert.error[role=alert]")).toHaveText(
    /^Too many attempts: wait 1[45] minutes and try again$/,
  );
  await screenshot(page, "signin-too-many-attempts");
});

test("sign-in works by keyboard alone", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").focus();
  await page.keyboard.type(user.email);
  // Enter continues; the password field appears focused.
  await page.keyboard.press("Enter");
  await expect(page.getByLabel("Password")).toBeFocused();
  await page.keyboard.type(user.password);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("org-name")).toHaveText(user.slug);
});

test.describe("without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("sign-in and the settings pages are server-rendered forms", async ({ page }) => {
    await page.goto("/signin");
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill("wrong-password-1");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.locator(".alert.error[role=alert]")).toHaveText("Email or password is incorrect");
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect(page.getByTestId("org-name")).toHaveText(user.slug);
    await page.goto("/settings/keys");
    await expect(page.getByRole("heading", { name: "Create a key" })).toBeVisible();

    // A form posts natively and the page comes back with the result: the new key, shown once.
    await page.getByLabel("Name", { exact: true }).fill("No-script key");
    await page.getByRole("checkbox", { name: /^tasks:read / }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    await expect(page.getByTestId("revealed-secret")).toHaveText(/^msp_test_/);
    await expect(page.getByTestId("key-card").filter({ hasText: "No-script key" })).toContainText("tasks:read");
    await page.goto("/settings/keys");
    await expect(page.getByTestId("revealed-secret")).toHaveCount(0);

    // A refused form shows the service's message and keeps what was typed.
    await page.getByLabel("Name", { exact: true }).fill("Nothing chosen");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect(page.locator(".alert.error[role=alert]")).toHaveText("At least one scope is required");
    await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Nothing chosen");

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/signin/);
  });
});
