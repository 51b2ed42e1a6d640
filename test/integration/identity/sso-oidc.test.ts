// Single sign-on through OIDC (docs/api-contract.md §11): an organisation connects oauth2-mock-server, verifies its
// domain through a TXT record, and people sign in through it under the organisation's policy.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { authFor } from "../../../server/identity/better-auth";
import { createSettingsCaller } from "../../../server/settings/router";
import { connectOidcOrg, type OidcProvider, ssoSignIn, startOidcProvider } from "../../helpers/identity-providers";
import { addPasskeyRow, browserRequest, TEST_ORIGIN } from "../../helpers/members";

let idp: OidcProvider;
beforeAll(async () => {
  idp = await startOidcProvider();
});
afterAll(() => idp.close());

async function sessionOf(cookie: string) {
  return authFor(TEST_ORIGIN).api.getSession({ headers: new Headers({ cookie }) });
}

describe("OIDC sign-in (docs/api-contract.md §11.3)", () => {
  it("first sign-in with groups crm-admins joins as admin; the next with no groups gets the default role", async () => {
    const org = await connectOidcOrg(idp);
    const email = `ana@${org.domain}`;
    idp.signInAs({ sub: "ana-1", email, name: "Ana", groups: ["crm-admins"] });
    const first = await ssoSignIn(org.providerId);
    expect(first.url.pathname).toBe("/settings");
    const session = await sessionOf(first.cookie);
    expect(session?.user.email).toBe(email);
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    const member = await prisma().member.findFirstOrThrow({ where: { orgId: org.orgId, userId: user.id } });
    expect(member.role).toBe("admin");
    expect((session?.session as { ssoProviderId?: string } | undefined)?.ssoProviderId).toBe(org.providerId);

    idp.signInAs({ sub: "ana-1", email, name: "Ana", groups: [] });
    const second = await ssoSignIn(org.providerId);
    expect(second.url.pathname).toBe("/settings");
    const again = await prisma().member.findFirstOrThrow({ where: { orgId: org.orgId, userId: user.id } });
    expect(again.role).toBe("viewer");
    const events = await prisma().directoryEvent.findMany({ where: { orgId: org.orgId }, orderBy: { id: "asc" } });
    expect(events.map((event) => event.action)).toEqual(["member.joined", "member.role_changed"]);
  });

  it("a member removed by hand is not added back by their next SSO sign-in", async () => {
    const org = await connectOidcOrg(idp);
    const email = `ben@${org.domain}`;
    idp.signInAs({ sub: "ben-1", email, groups: [] });
    expect((await ssoSignIn(org.providerId)).url.pathname).toBe("/settings");
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    const member = await prisma().member.findFirstOrThrow({ where: { orgId: org.orgId, userId: user.id } });
    await org.members.owner.caller.team.removeMember({ memberId: member.id, revokeKeys: true });
    expect(await prisma().session.count({ where: { userId: user.id } })).toBe(0);

    const refused = await ssoSignIn(org.providerId);
    expect(refused.url.pathname).toBe("/signin");
    expect(refused.url.searchParams.get("error")).toBe("MEMBER_REMOVED");
    expect(await prisma().member.count({ where: { orgId: org.orgId, userId: user.id } })).toBe(0);
    expect(await sessionOf(refused.cookie)).toBeNull();
  });

  it("refuses an email outside the verified domains, and a non-member without JIT", async () => {
    const org = await connectOidcOrg(idp, { jit: false });
    idp.signInAs({ sub: "eve-1", email: "eve@elsewhere.example" });
    const outside = await ssoSignIn(org.providerId);
    expect(outside.url.searchParams.get("error")).toBe("DOMAIN_NOT_VERIFIED");
    idp.signInAs({ sub: "cat-1", email: `cat@${org.domain}` });
    const stranger = await ssoSignIn(org.providerId);
    expect(stranger.url.searchParams.get("error")).toBe("NOT_A_MEMBER");
    expect(await prisma().user.count({ where: { email: `cat@${org.domain}` } })).toBe(0);
  });

  it("test the connection shows the claims and changes nothing", async () => {
    const org = await connectOidcOrg(idp);
    const email = `dan@${org.domain}`;
    idp.signInAs({ sub: "dan-1", email, name: "Dan", groups: ["crm-admins", "other"] });
    const { nonce, providerId, callbackURL } = await org.members.owner.caller.sso.startTest();
    const landed = await ssoSignIn(providerId, org.members.owner.request.headers.get("cookie") ?? "", callbackURL);
    expect(landed.url.pathname).toBe("/settings/security/sso");
    const result = await org.members.owner.caller.sso.testResult({ nonce });
    expect(result).toMatchObject({ protocol: "oidc", email, name: "Dan", groups: ["crm-admins", "other"] });
    expect(result?.outcome).toBe("let in as admin");
    expect(await prisma().user.count({ where: { email } })).toBe(0);
    expect(await prisma().directoryEvent.count({ where: { orgId: org.orgId } })).toBe(0);
  });

  it("an SSO sign-in is no second factor of ours: a member with a passkey confirms with it, and a 2FA requirement still asks", async () => {
    const org = await connectOidcOrg(idp);
    await prisma().organisation.update({ where: { id: org.orgId }, data: { requireTwoFactor: true } });
    const email = `ida@${org.domain}`;
    idp.signInAs({ sub: "ida-1", email, groups: ["crm-admins"] });
    const first = await ssoSignIn(org.providerId);
    const asIda = () => createSettingsCaller({ request: browserRequest(first.cookie) });
    const me = await asIda().me();
    expect(me.role).toBe("admin");
    expect(me.secondFactorNeeded).toBe("set-up");
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    await addPasskeyRow(user.id);
    const later = await asIda().me();
    expect(later.secondFactorNeeded).toBe("confirm");
    expect(later.recentlyAuthenticated).toBe(false);
    expect(later.secondFactor.session).toBeNull();
  });

  it("three first sign-ins of one person at once make one user and one membership, and each a session", async () => {
    const org = await connectOidcOrg(idp);
    for (let round = 0; round < 3; round += 1) {
      const email = `race${round}@${org.domain}`;
      idp.signInAs({ sub: `race-${round}`, email, groups: ["crm-admins"] });
      const landings = await Promise.all([1, 2, 3].map(() => ssoSignIn(org.providerId)));
      expect(landings.map((landing) => landing.url.pathname)).toEqual(["/settings", "/settings", "/settings"]);
      expect(await prisma().user.count({ where: { email } })).toBe(1);
      expect(await prisma().member.count({ where: { orgId: org.orgId, user: { email } } })).toBe(1);
      expect(await prisma().session.count({ where: { user: { email } } })).toBe(3);
    }
  });
});
