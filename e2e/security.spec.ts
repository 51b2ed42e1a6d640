// Two-factor sign-in in Chromium: enrolling an authenticator app (QR code, secret as text, backup codes, confirmed
// with a code computed here; the session stays the password sign-in it was), then the sign-in asking for the code
// (each code is accepted once); and a passkey registered and used with Chromium's virtual authenticator (CDP WebAuthn
// domain, verifying the user as the server requires) on http://localhost, since WebAuthn refuses IP addresses: once a
// user has one, their password alone no longer signs them in.
import { expect, test } from "@playwright/test";
import * as OTPAuth from "otpauth";
import { baseUrl, continueWithEmail, createUser, screenshot, signIn } from "./helpers";

test("an authenticator app: set up with a code, then sign-in asks for one", async ({ page }) => {
  const user = await createUser("totp");
  await signIn(page, user);
  await page.goto("/settings/security");
  await expect(page.getByTestId("totp-status")).toHaveText("off");
  await page.getByLabel("Your password").fill(user.password);
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  await expect(page.getByRole("img", { name: "QR code for your authenticator app" })).toBeVisible();
  const secret = (await page.getByTestId("totp-secret").textContent()) as string;
  expect(secret).toMatch(/^[A-Z2-7]+=*$/);
  await expect(page.getByTestId("backup-codes").locator("li")).toHaveCount(10);
  await screenshot(page, "security-totp-enrolment");
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 });
  await page.getByLabel("Code from your app").fill(totp.generate());
  await page.getByRole("button", { name: "Turn on two-factor" }).click();
  // The page comes back with two-factor on. The session is still the password sign-in (setting a factor up never
  // upgrades it), so changing the factors again first asks for a code.
  await expect(page.getByTestId("totp-status")).toHaveText("on");
  await expect(page.getByTestId("session-without-factor")).toContainText("it is not a two-factor session");
  await page.reload();
  await expect(page.getByTestId("totp-status")).toHaveText("on");
  await expect(page.getByTestId("factors-locked")).toContainText("a code from your authenticator app");
  await expect(page.getByText("Turn off two-factor…")).toHaveCount(0);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin\?signedOut=1$/);
  await continueWithEmail(page, user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByLabel("Authentication code")).toBeVisible();
  await screenshot(page, "signin-code");
  await page.getByLabel("Authentication code").fill("000000" === totp.generate() ? "111111" : "000000");
  await page.getByRole("button", { name: "Verify and sign in" }).click();
  await expect(page.locator(".alert.error[role=alert]")).toHaveText(
    "The code is not right: enter the current one from your app",
  );
  // The code that turned two-factor on is spent: the next one from the app signs in.
  await page.getByLabel("Authentication code").fill(totp.generate({ timestamp: Date.now() + 30_000 }));
  await page.getByRole("button", { name: "Verify and sign in" }).click();
  await expect(page.getByTestId("org-name")).toHaveText(user.slug);
});

test("a passkey registered with the virtual authenticator signs in; the password alone then does not", async ({
  page,
  context,
}) => {
  const user = await createUser("passkey");
  const origin = baseUrl().replace("127.0.0.1", "localhost");
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });

  await signIn(page, user, origin);
  await page.goto(`${origin}/settings/security`);
  await page.getByLabel("Passkey name").fill("Virtual key");
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("passkeys")).toContainText("Virtual key");
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  expect(credentials).toHaveLength(1);
  await screenshot(page, "security-passkey");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin\?signedOut=1$/);
  // The password is right, but it makes no session: the page asks for the passkey.
  await continueWithEmail(page, user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("passkey-required")).toContainText("has a passkey: finish signing in with it");
  await screenshot(page, "signin-passkey-required");
  await page.goto(`${origin}/signin`);
  await expect(page.getByRole("heading", { name: "Sign in to the settings" })).toBeVisible();
  await continueWithEmail(page, user.email);
  await page.getByRole("button", { name: "Sign in with a passkey" }).click();
  await expect(page.getByTestId("org-name")).toHaveText(user.slug);
  await page.goto(`${origin}/settings/audit`);
  const signIns = page.getByTestId("audit-trail").locator('tr[data-action="signin.succeeded"]');
  await expect(signIns.filter({ hasText: "method: passkey" })).toHaveCount(1);
  await expect(page.getByTestId("audit-trail").locator('tr[data-action="passkey.added"]')).toContainText(user.email);
});
