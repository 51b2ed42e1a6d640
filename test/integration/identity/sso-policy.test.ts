// "SSO required" and what it leaves (docs/api-contract.md §11.3): password, passkey, password reset and sign-up refused
// on every better-auth path for the organisation's people; break-glass owners with a second factor let in and
// recorded; a grace period and the operator's switch-off; unverified domains; who may configure; email-first discovery.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as discover } from "../../../app/api/sso/discover/route";
import { prisma } from "../../../server/db/transaction";
import { authFor } from "../../../server/identity/better-auth";
import { CLIENT_ADDRESS_HEADER } from "../../../server/platform/client-address";
import { createSettingsCaller } from "../../../server/settings/router";
import { admin } from "../../helpers/admin";
import { connectOidcOrg, type OidcProvider, ssoSignIn, startOidcProvider } from "../../helpers/identity-providers";
import {
  browserRequest,
  cookieHeader,
  memberIdOf,
  randomAddress,
  refusal,
  TEST_ORIGIN,
  type TestMember,
} from "../../helpers/members";
import { FLAGS, registerPasskey, SoftPasskey, signInWithPasskey } from "../../helpers/webauthn";

let idp: OidcProvider;
beforeAll(async () => {
  idp = await startOidcProvider();
});
afterAll(() => idp.close());

/** Calls a better-auth endpoint over HTTP as a browser (or a script) would, straight at /api/auth/*. */
async function authPost(path: string, body: object, cookie = "") {
  const headers = new Headers({ "content-type": "application/json", origin: TEST_ORIGIN });
  headers.set(CLIENT_ADDRESS_HEADER, randomAddress());
  if (cookie) headers.set("cookie", cookie);
  const response = await authFor(TEST_ORIGIN).handler(
    new Request(`${TEST_ORIGIN}/api/auth${path}`, { method: "POST", headers, body: JSON.stringify(body) }),
  );
  return {
    status: response.status,
    body: (await response.json().catch(() => null)) as { code?: string } | null,
    response,
  };
}

async function requirePolicy(owner: TestMember, graceUntil: Date | null = null) {
  await owner.caller.sso.savePolicy({
    mode: "required",
    jit: true,
    defaultRole: "viewer",
    groupsClaim: "groups",
    groupRoles: [],
    graceUntil,
  });
}

describe("SSO required (docs/api-contract.md §11.3)", () => {
  it("refuses password, passkey, reset and sign-up on every path; a password session already open loses access", async () => {
    const org = await connectOidcOrg(idp);
    const { developer, owner } = org.members;
    const passkey = new SoftPasskey();
    expect(
      (await registerPasskey(passkey, FLAGS.UP | FLAGS.UV, developer.request.headers.get("cookie") ?? "")).verified
        ?.response.ok,
    ).toBe(true);
    await requirePolicy(owner);

    const stale = await refusal(developer.caller.me());
    expect(stale.code).toBe("FORBIDDEN");
    expect(stale.message).toContain("requires single sign-on");

    const password = await authPost("/sign-in/email", { email: developer.email, password: developer.password });
    expect(password.status).toBe(403);
    expect(password.body?.code).toBe("SSO_REQUIRED");
    expect(
      password.response.headers
        .getSetCookie()
        .some((line) => line.includes("session_token=") && !/max-age=0/i.test(line)),
    ).toBe(false);
    await expect(
      authFor(TEST_ORIGIN).api.signInEmail({ body: { email: developer.email, password: developer.password } }),
    ).rejects.toMatchObject({ body: { code: "SSO_REQUIRED" } });

    const viaPasskey = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    expect(viaPasskey.response.status).toBe(403);
    expect(((await viaPasskey.response.json()) as { code?: string }).code).toBe("SSO_REQUIRED");

    const reset = await authPost("/request-password-reset", { email: developer.email, redirectTo: "/reset-password" });
    expect(reset.status).toBe(403);
    expect(reset.body?.code).toBe("SSO_REQUIRED");
    const signUp = await authPost("/sign-up/email", {
      email: `new@${org.domain}`,
      password: "long-enough-pw-1",
      name: "N",
    });
    expect(signUp.status).toBe(403);
    expect(signUp.body?.code).toBe("SSO_REQUIRED");
    expect(await prisma().user.count({ where: { email: `new@${org.domain}` } })).toBe(0);

    // The organisation's own provider still signs its people in.
    idp.signInAs({ sub: "fay-1", email: `fay@${org.domain}` });
    expect((await ssoSignIn(org.providerId)).url.pathname).toBe("/settings");
  });

  it("lets a break-glass owner in with a second factor, records it for the other owners; not once unnamed", async () => {
    const org = await connectOidcOrg(idp);
    const { owner } = org.members;
    const passkey = new SoftPasskey();
    await registerPasskey(passkey, FLAGS.UP | FLAGS.UV, owner.request.headers.get("cookie") ?? "");
    // With a passkey, step-up actions need a session that proved it.
    const confirmed = createSettingsCaller({
      request: browserRequest((await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV)).cookie),
    });
    await confirmed.sso.setBreakGlass({ memberId: await memberIdOf(org.orgId, owner.userId), breakGlass: true });
    await confirmed.sso.savePolicy({
      mode: "required",
      jit: true,
      defaultRole: "viewer",
      groupsClaim: "groups",
      groupRoles: [],
      graceUntil: null,
    });

    const password = await authPost("/sign-in/email", { email: owner.email, password: owner.password });
    expect(password.status).toBe(200);
    expect((password.body as { passkeyRequired?: boolean }).passkeyRequired).toBe(true);
    const signedIn = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    expect(signedIn.response.status).toBe(200);
    const uses = await prisma().settingsAuditEntry.findMany({
      where: { orgId: org.orgId, action: "sso.breakGlassUsed" },
    });
    expect(uses).toHaveLength(1);
    expect(uses[0]?.actorEmail).toBe(owner.email);
    const asOwner = createSettingsCaller({ request: browserRequest(signedIn.cookie) });
    const overview = await asOwner.sso.overview();
    expect(overview.breakGlassUses.map((use) => use.email)).toEqual([owner.email]);

    await asOwner.sso.setBreakGlass({ memberId: await memberIdOf(org.orgId, owner.userId), breakGlass: false });
    const unnamed = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    expect(unnamed.response.status).toBe(403);
  });

  it("a break-glass owner needs a second factor", async () => {
    const org = await connectOidcOrg(idp);
    const { owner } = org.members;
    const refused = await refusal(
      owner.caller.sso.setBreakGlass({ memberId: await memberIdOf(org.orgId, owner.userId), breakGlass: true }),
    );
    expect(refused.code).toBe("UNPROCESSABLE_CONTENT");
    expect(refused.message).toContain("authenticator app or a passkey");
  });

  it("a grace period lets passwords in until it ends; the operator's switch-off until the policy is saved again", async () => {
    const org = await connectOidcOrg(idp);
    const { developer, owner } = org.members;
    await requirePolicy(owner, new Date(Date.now() + 24 * 60 * 60 * 1000));
    expect((await authPost("/sign-in/email", { email: developer.email, password: developer.password })).status).toBe(
      200,
    );
    await prisma().ssoPolicy.update({ where: { orgId: org.orgId }, data: { graceUntil: new Date(Date.now() - 1000) } });
    expect((await authPost("/sign-in/email", { email: developer.email, password: developer.password })).status).toBe(
      403,
    );

    const printed = JSON.parse((await admin("sso-enforcement-off", "--org", org.slug, "--json")).stdout);
    expect(printed).toEqual({ orgId: org.orgId, mode: "required", wasEnforced: true });
    const after = await authPost("/sign-in/email", { email: developer.email, password: developer.password });
    expect(after.status).toBe(200);
    expect(
      await prisma().settingsAuditEntry.count({ where: { orgId: org.orgId, action: "sso.enforcementSuspended" } }),
    ).toBe(1);
    const afterCookie = cookieHeader(after.response.headers);
    expect((await createSettingsCaller({ request: browserRequest(afterCookie) }).me()).role).toBe("developer");
  });

  it("an unverified domain signs no one in and cannot be required", async () => {
    const org = await connectOidcOrg(idp);
    const { owner } = org.members;
    const other = `unverified-${org.domain}`;
    await owner.caller.sso.addDomain({ domain: other });
    const checked = await owner.caller.sso.verifyDomain({ domain: other });
    expect(checked.verified).toBe(false);
    expect(checked.lastError).toContain("_msp-crm-verification.");
    idp.signInAs({ sub: "gus-1", email: `gus@${other}` });
    expect((await ssoSignIn(org.providerId)).url.searchParams.get("error")).toBe("DOMAIN_NOT_VERIFIED");
    const required = await refusal(requirePolicy(owner));
    expect(required.code).toBe("UNPROCESSABLE_CONTENT");
    expect(required.message).toContain(other);
    expect((await prisma().ssoPolicy.findUniqueOrThrow({ where: { orgId: org.orgId } })).mode).toBe("optional");
  });

  it("developers and viewers can neither see nor change single sign-on", async () => {
    const org = await connectOidcOrg(idp);
    for (const member of [org.members.developer, org.members.viewer]) {
      const calls = [
        () => member.caller.sso.overview(),
        () => member.caller.sso.addDomain({ domain: "x.example" }),
        () => member.caller.sso.connectOidc({ issuer: idp.issuer, clientId: "x", clientSecret: "y", extraScopes: [] }),
        () => member.caller.sso.disconnect(),
        () => member.caller.sso.startTest(),
        () => requirePolicy(member),
      ];
      for (const call of calls) expect((await refusal(call())).code).toBe("FORBIDDEN");
    }
    expect(await prisma().ssoProvider.count({ where: { orgId: org.orgId } })).toBe(1);
    expect((await prisma().ssoPolicy.findUniqueOrThrow({ where: { orgId: org.orgId } })).mode).toBe("optional");
  });
});

describe("POST /api/sso/discover (docs/api-contract.md §11.4)", () => {
  async function ask(body: unknown) {
    const headers = new Headers({ "content-type": "application/json", host: "localhost:3000" });
    headers.set(CLIENT_ADDRESS_HEADER, randomAddress());
    const response = await discover(
      new Request(`${TEST_ORIGIN}/api/sso/discover`, { method: "POST", headers, body: JSON.stringify(body) }),
    );
    return { status: response.status, body: await response.json(), cookies: response.headers.getSetCookie() };
  }

  it("answers the same shape for a domain with a provider and one without, and starts the SSO sign-in", async () => {
    const org = await connectOidcOrg(idp);
    const sso = await ask({ email: `hal@${org.domain}` });
    expect(sso.status).toBe(200);
    expect(Object.keys(sso.body).sort()).toEqual(["method", "redirectTo"]);
    expect(sso.body.method).toBe("sso");
    expect(new URL(sso.body.redirectTo).origin).toBe(new URL(idp.issuer).origin);
    expect(sso.cookies.length).toBeGreaterThan(0);
    const none = await ask({ email: "hal@no-provider.example" });
    expect(none).toMatchObject({ status: 200, body: { method: "password", redirectTo: null } });
    expect(Object.keys(none.body).sort()).toEqual(["method", "redirectTo"]);
    expect((await ask({ mail: 1 })).status).toBe(400);
  });
});
