// Single sign-on in the browser (docs/single-sign-on.md): an owner connects an OIDC provider (oauth2-mock-server on
// loopback, which the server under test trusts through SSO_TRUSTED_IDP_ORIGINS), verifies a domain through a TXT
// record (a dns2 server the server asks through SSO_DNS_SERVERS), sets the policy, tests the connection; a person of
// the domain then joins through the email-first sign-in page, switches the policy to required, and a member's
// password sign-in is refused with the SSO-required message; the operator's switch-off shows until the policy is saved
// again, with a grace period counting down. e2e/global-setup.ts passes both ports.
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import dns2 from "dns2";
import { OAuth2Server } from "oauth2-mock-server";
import { addMember, admin, continueWithEmail, createUser, screenshot, signIn, type TestUser } from "./helpers";

const { Packet } = dns2;

/** Who the identity provider signs in next. */
interface Person {
  sub: string;
  email: string;
  name: string;
  groups: string[];
}

let owner: TestUser;
let member: TestUser;
let idp: OAuth2Server;
let dns: ReturnType<typeof dns2.createServer>;
let person: Person = { sub: "nobody", email: "nobody@example.invalid", name: "Nobody", groups: [] };
const records = new Map<string, string>();
const domain = `sso-${randomBytes(4).toString("hex")}.test`;

test.beforeAll(async () => {
  owner = await createUser("sso");
  member = await addMember(owner, "developer");

  idp = new OAuth2Server();
  await idp.issuer.keys.generate("RS256");
  const claims = () => ({
    sub: person.sub,
    email: person.email,
    email_verified: true,
    name: person.name,
    groups: person.groups,
  });
  idp.service.on("beforeTokenSigning", (token) => {
    Object.assign(token.payload, claims());
  });
  idp.service.on("beforeUserinfo", (response) => {
    response.body = claims();
  });
  await idp.start(Number(process.env.E2E_IDP_PORT), "127.0.0.1");
  // It names itself localhost, which the browser may try on ::1 first, where nothing listens.
  idp.issuer.url = `http://127.0.0.1:${process.env.E2E_IDP_PORT}`;

  dns = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const value = question ? records.get(question.name.toLowerCase()) : undefined;
      if (question && value && question.type === Packet.TYPE.TXT) {
        // The response's encoder writes plain records; the type describes decoded ones, which carry `toBuffer`.
        const answer = { name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: value };
        response.answers.push(answer as (typeof response.answers)[number]);
      }
      void send(response);
    },
  });
  await dns.listen({ udp: { port: Number(process.env.E2E_DNS_PORT), address: "127.0.0.1" } });
});

test.afterAll(async () => {
  await idp?.stop();
  await dns?.close();
});

test("a developer has no single sign-on link and gets the 403 page there", async ({ page }) => {
  await signIn(page, member);
  await expect(
    page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Single sign-on" }),
  ).toHaveCount(0);
  const refused = await page.goto("/settings/security/sso");
  expect(refused?.status()).toBe(403);
  await expect(page.getByTestId("forbidden")).toBeVisible();
});

test("connect OIDC, verify a domain, test the connection, sign in through SSO, require it", async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, owner);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Single sign-on" }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Single sign-on" })).toBeVisible();
  await expect(page.getByTestId("sso-mode")).toHaveText("off");
  await expect(page.getByTestId("redirect-uri")).toHaveText(/\/api\/auth\/sso\/callback\/sso-/);

  // The provider: discovery from the issuer, which the server trusts on loopback.
  await page.getByLabel("Issuer URL").fill(idp.issuer.url as string);
  await page.getByLabel("Client ID").fill("crm-e2e");
  await page.getByLabel("Client secret").fill("e2e-secret");
  await page.getByRole("button", { name: "Save OIDC provider" }).click();
  await expect(page.getByTestId("sso-provider")).toContainText("OIDC connected");
  await expect(page.getByTestId("sso-provider")).toContainText(idp.issuer.url as string);

  // The domain: its TXT record published, then verified.
  await page.getByLabel("Email domain", { exact: true }).fill(domain);
  await page.getByRole("button", { name: "Add domain" }).click();
  const card = page.getByTestId("sso-domain").filter({ hasText: domain });
  await expect(card.getByTestId("domain-status")).toHaveText("not verified");
  const txtName = (await card.getByTestId("txt-name").textContent()) as string;
  const txtValue = (await card.getByTestId("txt-value").textContent()) as string;
  expect(txtName).toBe(`_msp-crm-verification.${domain}`);
  records.set(txtName, txtValue);
  await card.getByRole("button", { name: `Verify ${domain}` }).click();
  await expect(card.getByTestId("domain-status")).toHaveText("verified");

  // Optional, with just-in-time membership and one rule.
  await page.getByRole("radio", { name: /^Optional:/ }).check();
  await page.getByLabel("Just-in-time membership").check();
  await page.getByLabel(/^Group → role map/).fill("crm-admins = admin");
  await page.getByRole("button", { name: "Save policy" }).click();
  await expect(page.getByText("Policy saved: single sign-on is optional.")).toBeVisible();
  await expect(page.getByTestId("sso-mode")).toHaveText("optional");

  // Test the connection: the provider's answer is shown, nobody is signed in or added.
  const email = `ana@${domain}`;
  person = { sub: "ana-1", email, name: "Ana Example", groups: ["crm-admins", "crm-all"] };
  await page.getByRole("button", { name: "Test the connection" }).click();
  await expect(page).toHaveURL(/\/settings\/security\/sso\?test=/);
  await expect(page.getByTestId("test-email")).toHaveText(email);
  await expect(page.getByTestId("test-name")).toHaveText("Ana Example");
  await expect(page.getByTestId("test-groups")).toContainText("crm-admins");
  await expect(page.getByTestId("test-outcome")).toHaveText("A real sign-in would let this person in as admin.");
  await expect(page.getByTestId("test-claims").locator("tr", { hasText: "sub" })).toContainText("ana-1");
  await screenshot(page, "sso-settings");

  // Email-first: Ana's address goes to the identity provider, and she joins as the map says.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin\?signedOut=1$/);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Continue", exact: true }).click();
  await expect(page.getByTestId("org-name")).toHaveText(owner.slug);
  await expect(page.getByTestId("role")).toHaveText("admin");

  // An admin who came through the identity provider requires it.
  await page.goto("/settings/security/sso");
  await page.getByRole("radio", { name: /^Required:/ }).check();
  await page.getByRole("button", { name: "Save policy" }).click();
  await expect(page.getByText("Policy saved: single sign-on is required.")).toBeVisible();
  await expect(page.getByTestId("sso-mode")).toHaveText("required");
  await page.goto("/settings/team");
  await expect(page.getByTestId("roles-managed-by-idp")).toContainText("Roles are managed by your identity provider");

  // A member whose address is outside the verified domains gets the password field, and is refused.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin\?signedOut=1$/);
  await continueWithEmail(page, member.email);
  await page.getByLabel("Password").fill(member.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("sso-required")).toHaveText(
    `${owner.slug} requires single sign-on: sign in with your work email through its identity provider`,
  );
  await expect(page.getByTestId("sso-hint")).toContainText("Sign in with SSO");
  await screenshot(page, "signin-sso-required");

  // The operator's switch-off shows on the page until the policy is saved again, here with a grace period.
  expect(await admin("sso-enforcement-off", "--org", owner.slug)).toMatchObject({
    mode: "required",
    wasEnforced: true,
  });
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Continue", exact: true }).click();
  await expect(page.getByTestId("org-name")).toHaveText(owner.slug);
  await page.goto("/settings/security/sso");
  await expect(page.getByTestId("enforcement-suspended")).toContainText("The operator switched enforcement off");
  const graceEnd = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 16);
  await page.getByLabel(/^Grace period ends/).fill(graceEnd);
  await page.getByRole("button", { name: "Save policy" }).click();
  await expect(page.getByText("Policy saved: single sign-on is required.")).toBeVisible();
  await expect(page.getByTestId("enforcement-suspended")).toHaveCount(0);
  await expect(page.getByTestId("grace-countdown")).toContainText("still work for 6 days 23 hours");
});

test("a refused SSO sign-in comes back to the sign-in page with its reason", async ({ page }) => {
  await page.goto("/signin?error=MEMBER_REMOVED");
  await expect(page.getByTestId("sso-refusal")).toHaveText(
    "Single sign-on refused (MEMBER_REMOVED): You were removed from this organisation: ask an owner or admin to invite you again.",
  );
});
