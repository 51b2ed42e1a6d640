// Single sign-on through SAML 2.0 (docs/api-contract.md §11): an organisation connects a samlify identity provider from
// its metadata, verifies its domain through a TXT record, and people sign in through it: the browser is sent to the
// provider with an AuthnRequest, and posts its signed Response back to our ACS URL. Only a signed, solicited, fresh
// Response, used once, makes a session.
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { describe, expect, it } from "vitest";
import { GET as authRouteGet } from "../../../app/api/auth/[...all]/route";
import { prisma } from "../../../server/db/transaction";
import { authFor } from "../../../server/identity/better-auth";
import { ssoUrls } from "../../../server/identity/sso/settings";
import { startSsoSignIn } from "../../helpers/identity-providers";
import { refusal, TEST_ORIGIN } from "../../helpers/members";
import {
  type AcsLanding,
  connectSamlOrg,
  postSamlResponse,
  rewrapSamlResponse,
  SAML_IDP_ENTITY_ID,
  SAML_IDP_SSO_URL,
  samlIdpMetadataXml,
  samlResponseFor,
  setsSessionCookie,
} from "../../helpers/saml-idp";

async function sessionOf(cookie: string) {
  return authFor(TEST_ORIGIN).api.getSession({ headers: new Headers({ cookie }) });
}

/** A refused Response: back on the sign-in page with `error`, no session cookie set, no session in the browser. */
async function expectRefused(landed: AcsLanding, error: string) {
  expect(landed.acsStatus).toBe(302);
  expect(landed.url.pathname).toBe("/signin");
  expect(landed.url.searchParams.get("error")).toBe(error);
  expect(setsSessionCookie(landed.setCookies)).toBe(false);
  expect(await sessionOf(landed.cookie)).toBeNull();
}

/** Nobody of `emails` has a user, and the organisation has no members beyond its four test members and no events. */
async function expectNothingCreated(orgId: string, emails: string[]) {
  expect(await prisma().user.count({ where: { email: { in: emails } } })).toBe(0);
  expect(await prisma().member.count({ where: { orgId } })).toBe(4);
  expect(await prisma().directoryEvent.count({ where: { orgId } })).toBe(0);
}

describe("SAML sign-in (docs/api-contract.md §11.1, §11.4)", () => {
  it("SAML signed response → session, joined with the mapped role", async () => {
    const org = await connectSamlOrg();
    const email = `ana@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const redirect = new URL(started.url);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(SAML_IDP_SSO_URL);
    expect(redirect.searchParams.get("SAMLRequest")).toBeTruthy();

    const answer = await samlResponseFor(started.url, { email, name: "Ana Lima", groups: ["crm-admins", "other"] });
    expect(answer.acsUrl).toBe(ssoUrls(TEST_ORIGIN, org.providerId).acsUrl);
    // Signed twice: the Response as a whole, and its Assertion.
    expect(
      Buffer.from(answer.SAMLResponse, "base64")
        .toString("utf8")
        .match(/<ds:Signature\b/g),
    ).toHaveLength(2);
    const landed = await postSamlResponse(answer, started.cookie);
    expect(landed.acsStatus).toBe(302);
    expect(landed.url.pathname).toBe("/settings");
    expect(landed.url.searchParams.get("error")).toBeNull();
    expect(setsSessionCookie(landed.setCookies)).toBe(true);

    const session = await sessionOf(landed.cookie);
    expect(session?.user.email).toBe(email);
    expect(session?.user.name).toBe("Ana Lima");
    expect((session?.session as { ssoProviderId?: string } | undefined)?.ssoProviderId).toBe(org.providerId);
    expect((session?.session as { activeOrganizationId?: string } | undefined)?.activeOrganizationId).toBe(org.orgId);
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    const member = await prisma().member.findFirstOrThrow({ where: { orgId: org.orgId, userId: user.id } });
    expect(member.role).toBe("admin");
    const account = await prisma().authAccount.findFirstOrThrow({ where: { userId: user.id } });
    expect(account).toMatchObject({ providerId: org.providerId, accountId: email });
    const events = await prisma().directoryEvent.findMany({ where: { orgId: org.orgId } });
    expect(events.map((event) => [event.action, event.target, event.details])).toEqual([
      ["member.joined", email, { role: "admin", via: "saml" }],
    ]);
  });

  it("a replayed SAML response is refused", async () => {
    const org = await connectSamlOrg();
    const email = `ben@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Ben", groups: [] });
    const first = await postSamlResponse(answer, started.cookie);
    expect(first.url.pathname).toBe("/settings");
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    expect(await prisma().session.count({ where: { userId: user.id } })).toBe(1);

    // The same Response again, from another browser (one that captured it), then from the first.
    const replayed = await postSamlResponse(answer);
    await expectRefused(replayed, "invalid_saml_response");
    const again = await postSamlResponse(answer, started.cookie);
    expect(again.acsStatus).toBe(302);
    expect(again.url.pathname).toBe("/signin");
    expect(again.url.searchParams.get("error")).toBe("invalid_saml_response");
    expect(setsSessionCookie(again.setCookies)).toBe(false);

    // Its signed Assertion in a Response made to answer a newer sign-in: the assertion was used once already.
    const fresh = await startSsoSignIn(org.providerId);
    const rewrapped = rewrapSamlResponse(answer, fresh.url);
    expect(rewrapped.requestId).not.toBe(answer.requestId);
    await expectRefused(await postSamlResponse(rewrapped, fresh.cookie), "replay_detected");

    expect(await prisma().session.count({ where: { userId: user.id } })).toBe(1);
    expect(await prisma().member.count({ where: { orgId: org.orgId } })).toBe(5);
    expect(await prisma().directoryEvent.count({ where: { orgId: org.orgId } })).toBe(1);
  });

  it("a tampered NameID is refused", async () => {
    const org = await connectSamlOrg();
    const email = `cat@${org.domain}`;
    const forged = `mallory@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(
      started.url,
      { email, name: "Cat", groups: ["crm-admins"] },
      { tamperNameId: forged },
    );
    expect(Buffer.from(answer.SAMLResponse, "base64").toString("utf8")).toContain(`>${forged}</saml:NameID>`);
    await expectRefused(await postSamlResponse(answer, started.cookie), "saml_error");
    await expectNothingCreated(org.orgId, [email, forged]);
  });

  it("an assertion not signed itself, inside a signed response, is refused", async () => {
    const org = await connectSamlOrg();
    const email = `hal@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Hal", groups: [] }, { unsignedAssertion: true });
    const xml = Buffer.from(answer.SAMLResponse, "base64").toString("utf8");
    expect(xml.match(/<ds:Signature\b/g)).toHaveLength(1);
    await expectRefused(await postSamlResponse(answer, started.cookie), "invalid_saml_response");
    await expectNothingCreated(org.orgId, [email]);
  });

  it("a SAML response signed with SHA-1 is refused", async () => {
    const org = await connectSamlOrg();
    const email = `jon@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Jon", groups: [] }, { sha1: true });
    expect(Buffer.from(answer.SAMLResponse, "base64").toString("utf8")).toContain("xmldsig#rsa-sha1");
    await expectRefused(await postSamlResponse(answer, started.cookie), "SAML_SHA1");
    await expectNothingCreated(org.orgId, [email]);
  });

  it("a SAML response meant for another service provider is refused", async () => {
    const org = await connectSamlOrg();
    const email = `kim@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(
      started.url,
      { email, name: "Kim", groups: [] },
      { audience: "https://other-app.example/saml/metadata" },
    );
    await expectRefused(await postSamlResponse(answer, started.cookie), "invalid_saml_response");
    await expectNothingCreated(org.orgId, [email]);
  });

  it("an unsolicited SAML response is refused", async () => {
    const org = await connectSamlOrg();
    const email = `dan@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Dan", groups: [] }, { unsolicited: true });
    expect(Buffer.from(answer.SAMLResponse, "base64").toString("utf8")).not.toContain("InResponseTo");
    await expectRefused(await postSamlResponse(answer, started.cookie), "unsolicited_response");
    await expectNothingCreated(org.orgId, [email]);
  });

  it("a SAML response whose NotOnOrAfter is past the skew is refused", async () => {
    const org = await connectSamlOrg();
    const email = `eve@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Eve", groups: [] }, { expired: true });
    const notOnOrAfter = /<saml:Conditions [^>]*NotOnOrAfter="([^"]+)"/.exec(
      Buffer.from(answer.SAMLResponse, "base64").toString("utf8"),
    )?.[1];
    expect(Date.now() - new Date(notOnOrAfter ?? 0).getTime()).toBeGreaterThan(5 * 60 * 1000);
    await expectRefused(await postSamlResponse(answer, started.cookie), "saml_error");
    await expectNothingCreated(org.orgId, [email]);
  });
  it("a one-valued SAML groups attribute is one group, commas and all", async () => {
    const group = "CN=CRM Admins,OU=Groups,DC=corp,DC=example";
    const org = await connectSamlOrg({ groupRoles: [{ group, role: "developer" }] });
    const email = `ivy@${org.domain}`;
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Ivy", groups: [group] });
    expect((await postSamlResponse(answer, started.cookie)).url.pathname).toBe("/settings");
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    const member = await prisma().member.findFirstOrThrow({ where: { orgId: org.orgId, userId: user.id } });
    expect(member.role).toBe("developer");
  });

  it("a SAML sign-in the policy refuses is recorded after its transaction rolled back", async () => {
    const org = await connectSamlOrg();
    const email = "gus@elsewhere.example";
    const started = await startSsoSignIn(org.providerId);
    const answer = await samlResponseFor(started.url, { email, name: "Gus", groups: ["crm-admins"] });
    await expectRefused(await postSamlResponse(answer, started.cookie), "DOMAIN_NOT_VERIFIED");
    expect(await prisma().user.count({ where: { email } })).toBe(0);
    const events = await prisma().directoryEvent.findMany({ where: { orgId: org.orgId } });
    expect(events.map((event) => [event.action, event.target, event.outcome, event.details])).toEqual([
      ["signin.refused", email, "error", { code: "DOMAIN_NOT_VERIFIED", protocol: "saml" }],
    ]);
  });
});

describe("SAML connection (docs/api-contract.md §11.1)", () => {
  it("SP metadata is served with the ACS URL and entity id", async () => {
    const org = await connectSamlOrg();
    const urls = ssoUrls(TEST_ORIGIN, org.providerId);
    const response = await authRouteGet(new Request(urls.spMetadataUrl));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("xml");
    const xml = await response.text();
    const amp = (value: string) => value.replace(/&/g, "&amp;");
    expect(xml).toContain(`entityID="${amp(urls.spEntityId)}"`);
    const acs = /<(?:\w+:)?AssertionConsumerService\b[^>]*>/.exec(xml)?.[0] ?? "";
    expect(acs).toContain('Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"');
    expect(acs).toContain(`Location="${amp(urls.acsUrl)}"`);
    expect(xml).toContain('WantAssertionsSigned="true"');
    expect(xml).toContain("urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress");

    const unknown = await authRouteGet(
      new Request(`${TEST_ORIGIN}/api/auth/sso/saml2/sp/metadata?providerId=sso-none`),
    );
    expect(unknown.status).toBe(404);
    const overview = await org.members.owner.caller.sso.overview();
    expect(overview.provider).toMatchObject({
      protocol: "saml",
      issuer: SAML_IDP_ENTITY_ID,
      idpSsoUrl: SAML_IDP_SSO_URL,
    });
  });

  it("metadata that is not SAML, or over 100 KiB, is refused with 422", async () => {
    const org = await connectSamlOrg();
    const { owner } = org.members;
    const before = await prisma().ssoProvider.findUniqueOrThrow({ where: { orgId: org.orgId } });
    const notSaml = await refusal(owner.caller.sso.connectSaml({ metadataXml: "<html><body>Sign in</body></html>" }));
    expect(getHTTPStatusCodeFromError(notSaml)).toBe(422);
    expect(notSaml.message).toBe("This is not SAML metadata (no EntityDescriptor)");
    const padded = samlIdpMetadataXml.replace(
      /<\/(\w+:)?EntityDescriptor>\s*$/,
      (end) => `<!--${"x".repeat(102_400)}-->${end}`,
    );
    expect(padded).not.toBe(samlIdpMetadataXml);
    const tooLarge = await refusal(owner.caller.sso.connectSaml({ metadataXml: padded }));
    expect(getHTTPStatusCodeFromError(tooLarge)).toBe(422);
    expect(tooLarge.message).toBe("The metadata is larger than 100 KiB");
    const after = await prisma().ssoProvider.findUniqueOrThrow({ where: { orgId: org.orgId } });
    expect(after).toEqual(before);
  });

  it("test the connection over SAML shows the attributes and changes nothing", async () => {
    const org = await connectSamlOrg();
    const { owner } = org.members;
    const email = `fay@${org.domain}`;
    const { nonce, providerId, callbackURL } = await owner.caller.sso.startTest();
    const started = await startSsoSignIn(providerId, owner.request.headers.get("cookie") ?? "", callbackURL);
    const answer = await samlResponseFor(started.url, { email, name: "Fay", groups: ["crm-admins", "other"] });
    const landed = await postSamlResponse(answer, started.cookie);
    expect(landed.url.pathname).toBe("/settings/security/sso");
    expect(landed.url.searchParams.get("test")).toBe(nonce);
    expect(landed.url.searchParams.get("error")).toBe("CONNECTION_TESTED");
    expect(setsSessionCookie(landed.setCookies)).toBe(false);

    const result = await owner.caller.sso.testResult({ nonce });
    expect(result).toMatchObject({ protocol: "saml", email, name: "Fay", groups: ["crm-admins", "other"] });
    expect(result?.claims).toMatchObject({ email, name: "Fay", groups: ["crm-admins", "other"] });
    expect(result?.outcome).toBe("let in as admin");
    await expectNothingCreated(org.orgId, [email]);
    expect(await prisma().authAccount.count({ where: { providerId } })).toBe(0);
  });
});
