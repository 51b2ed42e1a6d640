// Sign-in security of the settings on better-auth, against the real PostgreSQL and Redis: two-factor (TOTP with codes
// computed here, each accepted once; backup codes), a passkey asked for at a password sign-in, sessions that count as
// two-factor only when they proved a second factor, step-up (with the second factor when there is one), the
// organisation's two-factor requirement, the owner rules (also under concurrent calls), removal and role changes
// taking effect on the next request, sessions, the one limit on password and code guesses (per email and address,
// per address, per account) with every failed check in the audit trail, refusals with their documented status, and
// what the browser may call under /api/auth.
import { randomBytes } from "node:crypto";
import * as OTPAuth from "otpauth";
import { afterAll, describe, expect, it } from "vitest";
import { POST as authRoute } from "../../../app/api/auth/[...all]/route";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { ATTEMPT_LIMITS, countAttempt } from "../../../server/identity/attempts";
import { authFor } from "../../../server/identity/better-auth";
import { purgeExpiredSignIns, StepUpRequiredError, signOut } from "../../../server/identity/session";
import { createSettingsCaller } from "../../../server/settings/router";
import { captureLog } from "../../helpers/log-capture";
import {
  addMember,
  addPasskeyRow,
  ageSession,
  browserRequest,
  cookieHeader,
  memberIdOf,
  nextCodeWindow,
  orgWithRoles,
  randomAddress,
  refusal,
  signIn,
  TEST_ORIGIN,
  type TestMember,
} from "../../helpers/members";
import { FLAGS, registerPasskey, SoftPasskey, signInWithPasskey } from "../../helpers/webauthn";

afterAll(() => closeDb());

const auth = () => authFor(TEST_ORIGIN);

function totpOf(secret: string) {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" });
}

async function enrolTotp(member: TestMember): Promise<{ totp: OTPAuth.TOTP; backupCodes: string[] }> {
  const enrolment = await member.caller.security.startTotp({ password: member.password });
  expect(enrolment.uri).toMatch(/^otpauth:\/\/totp\/MSP%20CRM:/);
  expect(enrolment.qrDataUrl).toMatch(/^data:image\/png;base64,/);
  expect(enrolment.backupCodes).toHaveLength(10);
  const totp = totpOf(enrolment.secret);
  await member.caller.security.confirmTotp({ code: totp.generate() });
  return { totp, backupCodes: enrolment.backupCodes };
}

/** Signs in with password and a code from the app, as the sign-in page does; a caller acting as that session. */
async function signInWithCode(member: TestMember, totp: OTPAuth.TOTP) {
  await nextCodeWindow(member.userId);
  const first = await auth().api.signInEmail({
    headers: browserRequest().headers,
    body: { email: member.email, password: member.password },
    returnHeaders: true,
  });
  expect(first.response).toMatchObject({ twoFactorRedirect: true });
  const challenge = browserRequest(cookieHeader(first.headers));
  const done = await auth().api.verifyTOTP({
    headers: challenge.headers,
    body: { code: totp.generate() },
    returnHeaders: true,
  });
  const request = browserRequest(cookieHeader(done.headers, challenge.headers.get("cookie") ?? ""));
  return { request, caller: createSettingsCaller({ request }) };
}

describe("two-factor with an authenticator app", () => {
  it("enrols with a code, then sign-in asks for a code: a wrong one fails (and is recorded), the right one signs in", async () => {
    const { orgId, members } = await orgWithRoles();
    const dev = members.developer;
    const { totp, backupCodes } = await enrolTotp(dev);
    // Confirming replaced the session (a new cookie went to the browser): the old cookie signs nobody in.
    expect(await auth().api.getSession({ headers: dev.request.headers })).toBeNull();

    const first = await auth().api.signInEmail({
      headers: browserRequest().headers,
      body: { email: dev.email, password: dev.password },
      returnHeaders: true,
    });
    expect(first.response).toMatchObject({ twoFactorRedirect: true });
    const challenge = browserRequest(cookieHeader(first.headers));
    // The password alone signed nobody in.
    expect(await auth().api.getSession({ headers: challenge.headers })).toBeNull();

    await expect(
      auth().api.verifyTOTP({
        headers: challenge.headers,
        body: { code: String((Number(totp.generate()) + 1) % 1e6).padStart(6, "0") },
      }),
    ).rejects.toMatchObject({ statusCode: 401 });
    await nextCodeWindow(dev.userId);
    const done = await auth().api.verifyTOTP({
      headers: challenge.headers,
      body: { code: totp.generate() },
      returnHeaders: true,
    });
    const signedIn = browserRequest(cookieHeader(done.headers, challenge.headers.get("cookie") ?? ""));
    expect((await auth().api.getSession({ headers: signedIn.headers }))?.user.email).toBe(dev.email);

    const trail = await prisma().settingsAuditEntry.findMany({
      where: {
        orgId,
        actorUserId: dev.userId,
        action: { in: ["signin.failed", "signin.succeeded", "twoFactor.enabled"] },
      },
      orderBy: { id: "asc" },
      select: { action: true, details: true },
    });
    expect(trail.map((entry) => entry.action)).toEqual([
      "signin.succeeded", // the password sign-in of the fixture, before two-factor
      "twoFactor.enabled",
      "signin.failed",
      "signin.succeeded",
    ]);
    expect(trail[2]?.details).toMatchObject({ method: "password + authenticator code" });

    // A backup code signs in once.
    const again = await auth().api.signInEmail({
      headers: browserRequest().headers,
      body: { email: dev.email, password: dev.password },
      returnHeaders: true,
    });
    const backup = browserRequest(cookieHeader(again.headers));
    await auth().api.verifyBackupCode({ headers: backup.headers, body: { code: backupCodes[0] as string } });
    const third = await auth().api.signInEmail({
      headers: browserRequest().headers,
      body: { email: dev.email, password: dev.password },
      returnHeaders: true,
    });
    await expect(
      auth().api.verifyBackupCode({
        headers: browserRequest(cookieHeader(third.headers)).headers,
        body: { code: backupCodes[0] as string },
      }),
    ).rejects.toMatchObject({ statusCode: 401 });
  });

  it("turning it off needs the password", async () => {
    const { members } = await orgWithRoles();
    const { totp } = await enrolTotp(members.viewer);
    const { caller } = await signInWithCode(members.viewer, totp);
    expect((await caller.security.overview()).twoFactorEnabled).toBe(true);
    expect((await refusal(caller.security.disableTotp({ password: "not the password" }))).message).toBe(
      "The password is not right",
    );
    await caller.security.disableTotp({ password: members.viewer.password });
    expect((await prisma().user.findUniqueOrThrow({ where: { id: members.viewer.userId } })).twoFactorEnabled).toBe(
      false,
    );
  });
});

describe("step-up: a sign-in or second factor within 15 minutes", () => {
  it("every key (test keys too), webhook secrets and roles wait for a confirmation; a failed one is recorded", async () => {
    const { orgId, members } = await orgWithRoles();
    const admin = members.admin;
    await ageSession(admin, 16);
    const live = await refusal(admin.caller.apiKeys.create({ name: "Live", mode: "live", scopes: ["deals:read"] }));
    expect(live.code).toBe("FORBIDDEN");
    expect(live.cause).toBeInstanceOf(StepUpRequiredError);
    expect(live.message).toMatch(/^Confirm it's you first/);
    const target = await prisma().member.findFirstOrThrow({ where: { orgId, userId: members.viewer.userId } });
    expect(
      (await refusal(admin.caller.team.changeRole({ memberId: target.id, role: "developer" }))).cause,
    ).toBeInstanceOf(StepUpRequiredError);
    expect((await admin.caller.me()).recentlyAuthenticated).toBe(false);
    // A test key acts on the same data: it waits too, and so does rotating one.
    const test = await refusal(admin.caller.apiKeys.create({ name: "Test", mode: "test", scopes: ["deals:read"] }));
    expect(test.cause).toBeInstanceOf(StepUpRequiredError);
    const fixture = await prisma().apiKey.create({
      data: {
        orgId,
        name: "old",
        keyHash: `h-${randomBytes(8).toString("hex")}`,
        prefix: "msp_test_Ab12",
        isTest: true,
      },
    });
    expect((await refusal(admin.caller.apiKeys.rotate({ id: fixture.id }))).cause).toBeInstanceOf(StepUpRequiredError);

    const wrong = await refusal(admin.caller.security.confirm({ password: "wrong password" }));
    expect(wrong).toMatchObject({ code: "UNPROCESSABLE_CONTENT", message: "The password is not right" });
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, actorUserId: admin.userId, action: "verification.failed" },
        select: { details: true },
      }),
    ).toMatchObject({ details: { method: "password", purpose: "step-up" } });
    await admin.caller.security.confirm({ password: admin.password });
    expect((await admin.caller.me()).recentlyAuthenticated).toBe(true);
    expect((await admin.caller.apiKeys.create({ name: "Live", mode: "live", scopes: ["deals:read"] })).raw).toMatch(
      /^msp_live_/,
    );
    await admin.caller.team.changeRole({ memberId: target.id, role: "developer" });
  });

  it("with two-factor on, the confirmation is a fresh code, never the password", async () => {
    const { members } = await orgWithRoles();
    const { totp } = await enrolTotp(members.owner);
    const { request, caller } = await signInWithCode(members.owner, totp);
    const endpoint = await caller.webhooks.create({ url: "https://hooks.example.com/x", events: ["*"] });
    const session = await auth().api.getSession({ headers: request.headers });
    await prisma().session.update({
      where: { id: session?.session.id as string },
      data: { createdAt: new Date(Date.now() - 20 * 60_000), reauthenticatedAt: new Date(Date.now() - 20 * 60_000) },
    });
    expect((await refusal(caller.webhooks.revealSecret({ id: endpoint.endpoint.id }))).cause).toBeInstanceOf(
      StepUpRequiredError,
    );
    expect(
      (await refusal(caller.security.confirm({ code: "000000" === totp.generate() ? "111111" : "000000" }))).message,
    ).toBe("The code is not right: enter the current one from your app");
    // The password alone confirms nothing for a member with an authenticator app.
    expect((await refusal(caller.security.confirm({ password: members.owner.password }))).code).toBe(
      "UNPROCESSABLE_CONTENT",
    );
    // The code that signed this session in is spent.
    expect((await refusal(caller.security.confirm({ code: totp.generate() }))).message).toBe(
      "This code was already used: wait for the next one from your app",
    );
    await nextCodeWindow(members.owner.userId);
    await caller.security.confirm({ code: totp.generate() });
    expect((await caller.webhooks.revealSecret({ id: endpoint.endpoint.id })).secret).toBe(endpoint.secret);
  });
});

describe("the organisation requires two-factor for owners and admins", () => {
  it("an admin without one may look but change nothing until they set it up; developers are not concerned", async () => {
    const { orgId, members } = await orgWithRoles();
    await members.owner.caller.team.setRequireTwoFactor({ required: true });
    const admin = members.admin;
    expect((await admin.caller.me()).mustSetUpSecondFactor).toBe(true);
    expect(await admin.caller.apiKeys.list()).toEqual([]);
    const refused = await refusal(admin.caller.apiKeys.create({ name: "T", mode: "test", scopes: ["deals:read"] }));
    expect(refused.code).toBe("FORBIDDEN");
    expect(refused.message).toMatch(
      /requires two-factor authentication for owners and admins: set up an authenticator app or a passkey/,
    );
    expect(
      await prisma().settingsAuditEntry.count({
        where: { orgId, actorUserId: admin.userId, action: "action.refused" },
      }),
    ).toBe(1);
    // The owner who turned it on has none either: the same holds for them.
    expect((await members.owner.caller.me()).mustSetUpSecondFactor).toBe(true);
    await members.developer.caller.apiKeys.create({ name: "Dev", mode: "test", scopes: ["deals:read"] });

    const { totp } = await enrolTotp(admin);
    const secret = await prisma().twoFactor.findFirstOrThrow({ where: { userId: admin.userId } });
    expect(secret.secret).not.toMatch(/^[A-Z2-7]+$/); // stored encrypted, never as the base32 text
    const { caller } = await signInWithCode(admin, totp);
    expect((await caller.me()).mustSetUpSecondFactor).toBe(false);
    await caller.apiKeys.create({ name: "T", mode: "test", scopes: ["deals:read"] });
  });
});

describe("owners and membership", () => {
  it("an organisation keeps an owner; owners' roles change only by transfer; an admin never removes an owner", async () => {
    const { orgId, members } = await orgWithRoles();
    const ids = Object.fromEntries(
      (await prisma().member.findMany({ where: { orgId }, select: { id: true, userId: true } })).map((row) => [
        row.userId,
        row.id,
      ]),
    );
    const ownerId = ids[members.owner.userId] as string;
    const adminId = ids[members.admin.userId] as string;
    const selfRemoval = await refusal(members.owner.caller.team.removeMember({ memberId: ownerId }));
    expect(selfRemoval.code).toBe("UNPROCESSABLE_CONTENT");
    expect(selfRemoval.message).toBe("An organisation always keeps at least one owner");
    const demote = await refusal(members.admin.caller.team.changeRole({ memberId: ownerId, role: "viewer" }));
    expect(demote.code).toBe("FORBIDDEN");
    expect(demote.message).toBe("Owners keep their role: an owner transfers ownership to change it");
    const promote = await refusal(members.owner.caller.team.changeRole({ memberId: adminId, role: "owner" }));
    expect(promote.message).toBe("Owners keep their role: an owner transfers ownership to change it");
    expect((await refusal(members.admin.caller.team.removeMember({ memberId: ownerId }))).message).toBe(
      "Only an owner can remove an owner",
    );
    expect(await prisma().member.count({ where: { orgId, role: "owner" } })).toBe(1);

    await members.owner.caller.team.transferOwnership({ memberId: adminId });
    const roles = Object.fromEntries(
      (await prisma().member.findMany({ where: { orgId }, select: { userId: true, role: true } })).map((row) => [
        row.userId,
        row.role,
      ]),
    );
    expect(roles[members.admin.userId]).toBe("owner");
    expect(roles[members.owner.userId]).toBe("admin");
    // The former owner's next request acts as an admin: transferring again is refused.
    expect((await refusal(members.owner.caller.team.transferOwnership({ memberId: ownerId }))).message).toMatch(
      /^Your role \(admin\) cannot transfer ownership/,
    );
  });

  it("a removed member's next request is refused; a changed role counts from the next request", async () => {
    const { orgId, members } = await orgWithRoles();
    const viewerId = (await prisma().member.findFirstOrThrow({ where: { orgId, userId: members.viewer.userId } })).id;
    await refusal(members.viewer.caller.apiKeys.create({ name: "No", mode: "test", scopes: ["deals:read"] }));
    await members.admin.caller.team.changeRole({ memberId: viewerId, role: "developer" });
    await members.viewer.caller.apiKeys.create({ name: "Yes", mode: "test", scopes: ["deals:read"] });

    const devId = (await prisma().member.findFirstOrThrow({ where: { orgId, userId: members.developer.userId } })).id;
    await members.owner.caller.team.removeMember({ memberId: devId });
    // The removal ended their sessions of the organisation (their only one): the next request is signed out.
    const gone = await refusal(members.developer.caller.apiKeys.list());
    expect(gone.code).toBe("UNAUTHORIZED");
    expect(await auth().api.getSession({ headers: members.developer.request.headers })).toBeNull();
    expect(await prisma().session.count({ where: { userId: members.developer.userId } })).toBe(0);
  });

  it("a member of two organisations removed from one keeps their sessions of the other", async () => {
    const first = await orgWithRoles();
    const second = await orgWithRoles();
    const { developer } = first.members;
    await prisma().member.create({
      data: { id: `m_${developer.userId}`, orgId: second.orgId, userId: developer.userId, role: "viewer" },
    });
    const elsewhere = await signIn(developer.email, developer.password);
    const elsewhereSession = await auth().api.getSession({ headers: elsewhere.headers });
    await prisma().session.update({ where: { id: elsewhereSession?.session.id }, data: { activeOrgId: second.orgId } });
    await first.members.owner.caller.team.removeMember({ memberId: await memberIdOf(first.orgId, developer.userId) });
    expect((await refusal(developer.caller.apiKeys.list())).code).toBe("UNAUTHORIZED");
    const other = createSettingsCaller({ request: elsewhere });
    expect((await other.me()).org.id).toBe(second.orgId);
  });
});

describe("sessions", () => {
  it("lists each browser with its device and address; revoking one signs it out on the server; sign-out ends the session", async () => {
    const { orgId } = await orgWithRoles();
    const member = await addMember(orgId, "developer", "sessions");
    const laptop = await signIn(member.email, member.password, "198.51.100.23");
    const sessions = (await member.caller.security.overview()).sessions;
    expect(sessions).toHaveLength(2);
    expect(sessions.find((session) => session.current)).toMatchObject({ device: "Chrome on Linux" });
    const other = sessions.find((session) => session.ipAddress === "198.51.100.23");
    expect(other).toMatchObject({ current: false, device: "Chrome on Linux" });
    await member.caller.security.revokeSession({ id: other?.id as string });
    expect(await auth().api.getSession({ headers: laptop.headers })).toBeNull();
    expect((await refusal(createSettingsCaller({ request: laptop }).me())).code).toBe("UNAUTHORIZED");
    expect((await refusal(member.caller.security.revokeSession({ id: "not-a-session" }))).code).toBe("NOT_FOUND");

    await signOut(member.request);
    expect(await auth().api.getSession({ headers: member.request.headers })).toBeNull();
    const trail = await prisma().settingsAuditEntry.findMany({
      where: { orgId, actorUserId: member.userId },
      select: { action: true },
      orderBy: { id: "asc" },
    });
    expect(trail.map((entry) => entry.action)).toEqual([
      "signin.succeeded",
      "signin.succeeded",
      "session.revoked",
      "signout",
    ]);
  });

  it("the daily purge deletes expired sessions and one-time values and keeps the live ones", async () => {
    const { orgId } = await orgWithRoles();
    const member = await addMember(orgId, "viewer", "purge");
    const old = await signIn(member.email, member.password, "198.51.100.24");
    const oldSession = await auth().api.getSession({ headers: old.headers });
    await prisma().session.update({
      where: { id: oldSession?.session.id as string },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const challenge = await prisma().verification.create({
      data: {
        id: `v_${randomBytes(6).toString("hex")}`,
        identifier: "purge-test",
        value: "x",
        expiresAt: new Date(Date.now() - 1_000),
      },
    });
    const purged = await purgeExpiredSignIns();
    expect(purged.sessions).toBeGreaterThanOrEqual(1);
    expect(purged.verifications).toBeGreaterThanOrEqual(1);
    expect(await prisma().session.findUnique({ where: { id: oldSession?.session.id as string } })).toBeNull();
    expect(await prisma().verification.findUnique({ where: { id: challenge.id } })).toBeNull();
    expect((await member.caller.me()).user.email).toBe(member.email);
  });
});

describe("password and code guesses: one limit for every check, in the shared store", () => {
  it(`refuses the ${ATTEMPT_LIMITS.perAccountAndAddress + 1}th sign-in for one email from one address, even with the right password, and nowhere else`, async () => {
    const { orgId } = await orgWithRoles();
    const member = await addMember(orgId, "viewer", "limited");
    const address = randomAddress();
    for (let i = 0; i < ATTEMPT_LIMITS.perAccountAndAddress; i++) {
      await expect(signIn(member.email, "wrong password!", address)).rejects.toMatchObject({ statusCode: 401 });
    }
    await expect(signIn(member.email, member.password, address)).rejects.toMatchObject({
      statusCode: 429,
      message: expect.stringMatching(/^Too many attempts: wait 1[45] minutes and try again$/),
    });
    // Whoever guessed from there locked out that address, not the member: elsewhere they sign in.
    await signIn(member.email, member.password, randomAddress());
    const failed = await prisma().settingsAuditEntry.findMany({
      where: { orgId, actorUserId: member.userId, action: "signin.failed" },
      select: { details: true, ip: true },
      orderBy: { id: "asc" },
    });
    expect(failed).toHaveLength(ATTEMPT_LIMITS.perAccountAndAddress + 1);
    expect(failed[0]).toMatchObject({ ip: address, details: { method: "password" } });
    expect(failed.at(-1)?.details).toMatchObject({ reason: "too many attempts (account and address)" });
  });

  it(`refuses the ${ATTEMPT_LIMITS.perAddress + 1}th attempt from one address, whatever the email`, async () => {
    const address = `198.51.100.${Math.floor(Math.random() * 200) + 30}`;
    for (let i = 0; i < ATTEMPT_LIMITS.perAddress; i++) {
      await expect(
        signIn(`nobody-${i}-${randomBytes(3).toString("hex")}@example.com`, "whatever pw", address),
      ).rejects.toMatchObject({
        statusCode: 401,
      });
    }
    await expect(
      signIn(`one-more-${randomBytes(3).toString("hex")}@example.com`, "whatever pw", address),
    ).rejects.toMatchObject({
      statusCode: 429,
    });
    // An address no user has is recorded without an organisation.
    expect(
      await prisma().settingsAuditEntry.count({ where: { orgId: null, ip: address, action: "signin.failed" } }),
    ).toBe(ATTEMPT_LIMITS.perAddress + 1);
  });

  it("counts an IPv6 client as its /64 network: rotating addresses inside it does not reset the limit", async () => {
    const prefix = `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}`;
    const subject = { email: `v6-${randomBytes(3).toString("hex")}@example.com`, userId: null };
    for (let i = 0; i < ATTEMPT_LIMITS.perAccountAndAddress; i++) {
      expect(await countAttempt({ ...subject, address: `${prefix}::${(i + 1).toString(16)}` })).toBeNull();
    }
    expect(await countAttempt({ ...subject, address: `${prefix}:ffff:ffff:ffff:ffff` })).toMatchObject({
      limit: "account and address",
    });
    // The next /64 is another client.
    expect(await countAttempt({ ...subject, address: `2001:db9::${randomBytes(2).toString("hex")}` })).toBeNull();
  });

  it(`counts at most ${ATTEMPT_LIMITS.perAccount} attempts an hour on one account from anywhere, except where the user has a session`, async () => {
    const { orgId } = await orgWithRoles();
    const member = await addMember(orgId, "developer", "spread");
    const subject = { email: member.email, userId: member.userId };
    // Spread over addresses, each below its own limit (the limiter itself: a hundred scrypt checks would add nothing).
    // The fixture's own sign-in, from an address without a session yet, was the first.
    for (let i = 1; i < ATTEMPT_LIMITS.perAccount; i++) {
      expect(await countAttempt({ ...subject, address: `203.0.${Math.floor(i / 200)}.${i % 200}` })).toBeNull();
    }
    expect(await countAttempt({ ...subject, address: randomAddress() })).toMatchObject({
      limit: "account",
      message: expect.stringMatching(/^Too many attempts: wait \d+ minutes? and try again$/),
    });
    // The address of the member's own session is not held to it: a stranger cannot lock them out where they work.
    expect(await countAttempt({ ...subject, address: member.request.ip })).toBeNull();
    await signIn(member.email, member.password, member.request.ip as string);
  });

  it("enrolling and removing an authenticator app: 10 wrong passwords, then 429 with the reason; each one recorded", async () => {
    const { orgId, members } = await orgWithRoles();
    const viewer = members.viewer;
    for (let i = 0; i < ATTEMPT_LIMITS.perAccountAndAddress - 1; i++) {
      expect(await refusal(viewer.caller.security.startTotp({ password: `guess number ${i}` }))).toMatchObject({
        code: "UNPROCESSABLE_CONTENT",
        message: "The password is not right",
      });
    }
    // The fixture's sign-in counted in the same window (same email, same address).
    const limited = await refusal(viewer.caller.security.startTotp({ password: viewer.password }));
    expect(limited.code).toBe("TOO_MANY_REQUESTS");
    expect(limited.message).toMatch(/^Too many attempts: wait 1[45] minutes and try again$/);
    expect((await refusal(viewer.caller.security.disableTotp({ password: "another guess" }))).code).toBe(
      "TOO_MANY_REQUESTS",
    );
    const trail = await prisma().settingsAuditEntry.findMany({
      where: { orgId, actorUserId: viewer.userId, action: "verification.failed" },
      select: { details: true },
    });
    expect(trail).toHaveLength(ATTEMPT_LIMITS.perAccountAndAddress + 1);
    expect(trail[0]?.details).toMatchObject({ method: "password", purpose: "authenticator app set-up" });
    expect(trail.at(-1)?.details).toMatchObject({
      method: "password",
      purpose: "authenticator app removal",
      reason: "too many attempts (account and address)",
    });
  });

  it("step-up with wrong codes: refused, recorded, then 429; the right code after that is refused too", async () => {
    const { orgId, members } = await orgWithRoles();
    const { totp } = await enrolTotp(members.admin);
    const { caller } = await signInWithCode(members.admin, totp);
    const wrong = (i: number) => String((Number(totp.generate()) + 7 + i) % 1e6).padStart(6, "0");
    let refusedWith = "";
    for (let i = 0; i < 12 && refusedWith !== "TOO_MANY_REQUESTS"; i++) {
      refusedWith = (await refusal(caller.security.confirm({ code: wrong(i) }))).code;
    }
    expect(refusedWith).toBe("TOO_MANY_REQUESTS");
    await nextCodeWindow(members.admin.userId);
    expect((await refusal(caller.security.confirm({ code: totp.generate() }))).code).toBe("TOO_MANY_REQUESTS");
    const failed = await prisma().settingsAuditEntry.findMany({
      where: { orgId, actorUserId: members.admin.userId, action: "verification.failed" },
      select: { details: true },
    });
    expect(failed.length).toBeGreaterThanOrEqual(2);
    expect(failed[0]?.details).toMatchObject({ method: "authenticator code", purpose: "step-up" });
  });

  it("an email PostgreSQL cannot store is refused as an invalid email (400), not an error", async () => {
    await expect(signIn("a\u0000@example.com", "a long enough password")).rejects.toMatchObject({
      statusCode: 400,
      message: "Invalid email",
    });
  });
});

describe("the session cookie", () => {
  it("is HttpOnly and SameSite=Lax, and Secure (with the __Secure- prefix) exactly when the public origin is https", async () => {
    const { members } = await orgWithRoles();
    for (const [origin, secure] of [
      ["https://crm.example.com", true],
      ["http://crm.lan:3000", false],
    ] as const) {
      const { headers } = await authFor(origin).api.signInEmail({
        headers: browserRequest().headers,
        body: { email: members.viewer.email, password: members.viewer.password },
        returnHeaders: true,
      });
      const cookie = headers.getSetCookie().find((line) => line.includes("msp.session_token=")) as string;
      expect(cookie.startsWith(secure ? "__Secure-msp.session_token=" : "msp.session_token=")).toBe(true);
      expect(cookie).toMatch(/; HttpOnly/i);
      expect(cookie).toMatch(/; SameSite=Lax/i);
      expect(/; Secure/i.test(cookie)).toBe(secure);
      expect(cookie).toMatch(/; Max-Age=604800/);
    }
  });
});

describe("what a browser may call under /api/auth", () => {
  const call = (path: string, init: RequestInit = {}) =>
    authRoute(new Request(`${TEST_ORIGIN}/api/auth${path}`, { method: "POST", ...init }));

  it("sign-up is refused (invitation only); endpoints the pages call on the server are not served", async () => {
    const signUp = await call("/sign-up/email", {
      headers: { "content-type": "application/json", origin: TEST_ORIGIN },
      body: JSON.stringify({ email: "walk-in@example.com", password: "a long enough password", name: "Walk In" }),
    });
    expect(signUp.status).toBe(403);
    expect(await signUp.json()).toMatchObject({ code: "INVITATION_REQUIRED" });
    for (const path of [
      "/sign-in/email",
      "/organization/invite-member",
      "/organization/update-member-role",
      "/two-factor/enable",
      "/get-session",
    ]) {
      expect((await call(path, { headers: { origin: TEST_ORIGIN } })).status, path).toBe(404);
    }
    expect(await prisma().user.count({ where: { email: "walk-in@example.com" } })).toBe(0);
  });

  it("checks the Origin of cookie-bearing requests, and adding a passkey needs a recent sign-in", async () => {
    const { members } = await orgWithRoles();
    const cookie = members.developer.request.headers.get("cookie") as string;
    const crossSite = await call("/passkey/verify-authentication", {
      headers: { cookie, origin: "https://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ response: {} }),
    });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.json()).toMatchObject({ code: "INVALID_ORIGIN" });

    const options = await authRoute(
      new Request(`${TEST_ORIGIN}/api/auth/passkey/generate-register-options`, {
        headers: { cookie, origin: TEST_ORIGIN },
      }),
    );
    expect(options.status).toBe(200);
    expect(await options.json()).toMatchObject({ rp: { id: "localhost" }, user: { name: members.developer.email } });
    await ageSession(members.developer, 20);
    const stale = await authRoute(
      new Request(`${TEST_ORIGIN}/api/auth/passkey/generate-register-options`, {
        headers: { cookie, origin: TEST_ORIGIN },
      }),
    );
    expect(stale.status).toBe(403);
    expect(await stale.json()).toMatchObject({ code: "STEP_UP_REQUIRED" });
  });
});

describe("the audit trail", () => {
  it("lists entries newest first with actor, target and address, filtered by actor and by action", async () => {
    const { orgId, members } = await orgWithRoles();
    await members.developer.caller.apiKeys.create({ name: "Dev key", mode: "test", scopes: ["deals:read"] });
    await refusal(members.viewer.caller.apiKeys.create({ name: "Nope", mode: "test", scopes: ["deals:read"] }));
    await members.admin.caller.team.invite({ email: `audit-${Date.now()}@example.com`, role: "viewer" });
    const all = await members.owner.caller.audit.list({});
    expect(all.data.slice(0, 3).map((entry) => [entry.action, entry.actorEmail])).toEqual([
      ["invitation.created", members.admin.email],
      ["action.refused", members.viewer.email],
      ["apiKey.created", members.developer.email],
    ]);
    expect(all.data[2]).toMatchObject({ target: expect.stringMatching(/^test key "Dev key" \(msp_test_\w{4}…\)$/) });
    expect(all.data.every((entry) => entry.ip?.startsWith("198."))).toBe(true);
    const byViewer = await members.owner.caller.audit.list({ actor: members.viewer.userId });
    expect(byViewer.data.map((entry) => entry.action)).toEqual(["action.refused", "signin.succeeded"]);
    expect(byViewer.data[0]?.details).toMatchObject({ attempted: "apiKeys.create" });
    const signIns = await members.owner.caller.audit.list({ action: "signin.succeeded" });
    expect(new Set(signIns.data.map((entry) => entry.actorEmail))).toEqual(
      new Set(Object.values(members).map((member) => member.email)),
    );
    const page = await members.owner.caller.audit.list({ limit: 2 });
    const next = await members.owner.caller.audit.list({ limit: 2, cursor: page.nextCursor ?? undefined });
    expect(next.data[0]?.id).toBe(all.data[2]?.id);
    expect((await members.owner.caller.audit.actors()).map((actor) => actor.email).sort()).toEqual(
      Object.values(members)
        .map((member) => member.email)
        .sort(),
    );
    await expect(members.owner.caller.audit.list({ action: "nonsense" })).rejects.toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
    });
    expect(await prisma().settingsAuditEntry.count({ where: { orgId } })).toBe(all.data.length);
  });
});

describe("a second factor that is asked for", () => {
  it("a password does not sign in a member who has a passkey: the passkey is asked for and no session is made", async () => {
    const { orgId, members } = await orgWithRoles();
    await members.owner.caller.team.setRequireTwoFactor({ required: true });
    const admin = members.admin;
    await addPasskeyRow(admin.userId);
    const before = new Date();
    const attempt = await auth().api.signInEmail({
      headers: browserRequest().headers,
      body: { email: admin.email, password: admin.password },
      returnHeaders: true,
    });
    expect(attempt.response).toEqual({ passkeyRequired: true });
    const cookie = cookieHeader(attempt.headers);
    expect(cookie).not.toContain("session_token");
    expect(await auth().api.getSession({ headers: browserRequest(cookie).headers })).toBeNull();
    expect(await prisma().session.count({ where: { userId: admin.userId, createdAt: { gte: before } } })).toBe(0);
    // The session from before the passkey (a password alone) reaches nothing but the security and confirmation pages.
    const me = await admin.caller.me();
    expect(me).toMatchObject({ mustSetUpSecondFactor: true, secondFactorNeeded: "confirm", confirmWith: "passkey" });
    const blocked = await refusal(admin.caller.webhooks.create({ url: "https://hooks.example.com/a", events: ["*"] }));
    expect(blocked.code).toBe("FORBIDDEN");
    expect(blocked.message).toMatch(/confirm with your authenticator app or passkey first/);
    expect((await refusal(admin.caller.security.confirm({ password: admin.password }))).message).toBe(
      "You have a passkey: confirm with it (a password alone is not enough)",
    );
    expect(
      await prisma().settingsAuditEntry.count({
        where: { orgId, actorUserId: admin.userId, action: "action.refused" },
      }),
    ).toBe(1);
  });

  it("only a sign-in with a code (or a passkey) is a two-factor session; a password-only one is asked to confirm", async () => {
    const { members } = await orgWithRoles();
    await members.owner.caller.team.setRequireTwoFactor({ required: true });
    const { totp } = await enrolTotp(members.admin);
    const { request, caller } = await signInWithCode(members.admin, totp);
    const session = await prisma().session.findFirstOrThrow({
      where: { token: (await auth().api.getSession({ headers: request.headers }))?.session.token },
    });
    expect(session.secondFactor).toBe("authenticator app");
    expect(await caller.me()).toMatchObject({ mustSetUpSecondFactor: false, secondFactorNeeded: null });
    // A session made by the password alone (before the app was set up elsewhere) must confirm with a code first.
    await prisma().session.update({ where: { id: session.id }, data: { secondFactor: null } });
    expect((await caller.me()).secondFactorNeeded).toBe("confirm");
    expect((await caller.me()).recentlyAuthenticated).toBe(false);
    await nextCodeWindow(members.admin.userId);
    await caller.security.confirm({ code: totp.generate() });
    expect(await caller.me()).toMatchObject({ secondFactorNeeded: null, recentlyAuthenticated: true });
  });

  it("a code signs in once: the same code for a second sign-in, even at the same moment, is refused", async () => {
    const { members } = await orgWithRoles();
    const { totp } = await enrolTotp(members.developer);
    await nextCodeWindow(members.developer.userId);
    const challenge = async () => {
      const first = await auth().api.signInEmail({
        headers: browserRequest().headers,
        body: { email: members.developer.email, password: members.developer.password },
        returnHeaders: true,
      });
      return browserRequest(cookieHeader(first.headers));
    };
    const [one, two] = await Promise.all([challenge(), challenge()]);
    const code = totp.generate();
    const results = await Promise.allSettled(
      [one, two].map((request) => auth().api.verifyTOTP({ headers: request.headers, body: { code } })),
    );
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(results.find((result) => result.status === "rejected")).toMatchObject({
      reason: { statusCode: 401, body: { code: "CODE_ALREADY_USED" } },
    });
  });
});

describe("a second factor that cannot be stripped", () => {
  /** The session row behind a request's cookie. */
  async function sessionOf(request: { headers: Headers }) {
    const found = await auth().api.getSession({ headers: request.headers });
    return prisma().session.findUniqueOrThrow({ where: { id: found?.session.id as string } });
  }

  it("a passkey assertion that did not verify the user (flags 0x01) signs nobody in; a verified one (0x05) does", async () => {
    const { orgId, members } = await orgWithRoles();
    const passkey = new SoftPasskey();
    await passkey.storeFor(members.admin.userId);
    const before = new Date();

    const presentOnly = await signInWithPasskey(passkey, FLAGS.UP);
    expect(presentOnly.userVerification).toBe("required");
    expect(presentOnly.response.status).toBe(401);
    expect(await presentOnly.response.json()).toMatchObject({ code: "USER_VERIFICATION_REQUIRED" });
    expect(presentOnly.cookie).not.toContain("session_token");
    expect(await prisma().session.count({ where: { userId: members.admin.userId, createdAt: { gte: before } } })).toBe(
      0,
    );
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, actorUserId: members.admin.userId, action: "signin.failed" },
        select: { details: true },
      }),
    ).toMatchObject({ details: { method: "passkey", reason: expect.stringMatching(/did not verify you/) } });

    const verified = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    expect(verified.response.status).toBe(200);
    const session = await sessionOf(browserRequest(verified.cookie));
    expect(session).toMatchObject({ userId: members.admin.userId, secondFactor: "passkey" });
  });

  it("registering a passkey asks for user verification and refuses an attestation without it", async () => {
    const { members } = await orgWithRoles();
    const cookie = members.developer.request.headers.get("cookie") as string;
    const unverified = await registerPasskey(new SoftPasskey(), FLAGS.UP, cookie);
    expect(unverified.options.status).toBe(200);
    expect(unverified.userVerification).toBe("required");
    expect(unverified.verified?.response.status).toBe(401);
    expect(await prisma().passkey.count({ where: { userId: members.developer.userId } })).toBe(0);

    const verified = await registerPasskey(new SoftPasskey(), FLAGS.UP | FLAGS.UV, cookie);
    expect(verified.verified?.response.status).toBe(200);
    expect(await prisma().passkey.count({ where: { userId: members.developer.userId } })).toBe(1);
  });

  it("a stolen session with the password cannot add, replace or remove a factor: each needs the strongest one, recently", async () => {
    const { orgId, members } = await orgWithRoles();
    const owner = members.owner;
    await owner.caller.team.setRequireTwoFactor({ required: true });
    const { totp, backupCodes } = await enrolTotp(owner);
    const withCode = await signInWithCode(owner, totp);
    await ageSession(withCode, 16);
    // Hours later: the session and the password no longer reach the factors, nor the organisation's requirement.
    for (const attempt of [
      () => withCode.caller.security.disableTotp({ password: owner.password }),
      () => withCode.caller.security.replaceBackupCodes({ password: owner.password }),
      () => withCode.caller.team.setRequireTwoFactor({ required: false }),
    ]) {
      const refused = await refusal(attempt());
      expect(refused.code).toBe("FORBIDDEN");
      expect(refused.cause).toBeInstanceOf(StepUpRequiredError);
      expect(refused.message).toMatch(/^Confirm it's you with a code from your authenticator app first/);
    }
    const stale = await registerPasskey(
      new SoftPasskey(),
      FLAGS.UP | FLAGS.UV,
      withCode.request.headers.get("cookie") as string,
    );
    expect(stale.options.status).toBe(403);
    expect(await stale.options.json()).toMatchObject({ code: "STEP_UP_REQUIRED" });

    // A code confirms it: new backup codes, the old ones gone.
    await nextCodeWindow(owner.userId);
    await withCode.caller.security.confirm({ code: totp.generate() });
    const replaced = await withCode.caller.security.replaceBackupCodes({ password: owner.password });
    expect(replaced.backupCodes).toHaveLength(10);
    expect(replaced.backupCodes).not.toContain(backupCodes[0]);
    expect(
      await refusal(withCode.caller.security.confirm({ code: backupCodes[0] as string, backup: true })),
    ).toMatchObject({ message: "This backup code is not right or was already used" });

    // With a passkey too, the passkey is the strongest: a fresh code no longer removes anything.
    const passkey = new SoftPasskey();
    const added = await registerPasskey(passkey, FLAGS.UP | FLAGS.UV, withCode.request.headers.get("cookie") as string);
    expect(added.verified?.response.status).toBe(200);
    await nextCodeWindow(owner.userId);
    await withCode.caller.security.confirm({ code: totp.generate() });
    const [passkeyRow] = await prisma().passkey.findMany({ where: { userId: owner.userId } });
    for (const attempt of [
      () => withCode.caller.security.disableTotp({ password: owner.password }),
      () => withCode.caller.security.removePasskey({ id: passkeyRow?.id as string }),
      () => withCode.caller.team.setRequireTwoFactor({ required: false }),
    ]) {
      expect((await refusal(attempt())).message).toMatch(/^Confirm it's you with your passkey first/);
    }
    // Other step-up actions take the fresh code as before.
    await withCode.caller.apiKeys.create({ name: "Live", mode: "live", scopes: ["deals:read"] });

    // The passkey confirms it (a sign-in of its own): now each change runs, and each is in the trail.
    const confirmed = await signInWithPasskey(
      passkey,
      FLAGS.UP | FLAGS.UV,
      withCode.request.headers.get("cookie") as string,
    );
    const viaPasskey = createSettingsCaller({ request: browserRequest(confirmed.cookie) });
    await viaPasskey.team.setRequireTwoFactor({ required: false });
    // Turning the app off gives the session a new token (the browser gets its cookie): this one signs in anew.
    await viaPasskey.security.disableTotp({ password: owner.password });
    const again = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    await createSettingsCaller({ request: browserRequest(again.cookie) }).security.removePasskey({
      id: passkeyRow?.id as string,
    });
    const trail = await prisma().settingsAuditEntry.findMany({
      where: {
        orgId,
        actorUserId: owner.userId,
        action: {
          in: [
            "twoFactor.backupCodesReplaced",
            "passkey.added",
            "twoFactor.disabled",
            "organisation.settingsChanged",
            "passkey.removed",
          ],
        },
      },
      orderBy: { id: "asc" },
      select: { action: true, details: true },
    });
    expect(trail.map((entry) => entry.action)).toEqual([
      "organisation.settingsChanged", // turned on at the start
      "twoFactor.backupCodesReplaced",
      "passkey.added",
      "organisation.settingsChanged",
      "twoFactor.disabled",
      "passkey.removed",
    ]);
    expect(trail[3]?.details).toEqual({ requireTwoFactor: false });
  });

  it("turning the authenticator app on leaves the session as it was: no fresher, no longer, not two-factor", async () => {
    const { members } = await orgWithRoles();
    await members.owner.caller.team.setRequireTwoFactor({ required: true });
    const admin = members.admin;
    // Signed in two days ago with the password, confirmed with it a minute ago: it may set up a factor.
    const old = await sessionOf(admin.request);
    const signedInAt = new Date(Date.now() - 2 * 24 * 3_600_000);
    const expiresAt = new Date(signedInAt.getTime() + 7 * 24 * 3_600_000);
    const confirmedAt = new Date(Date.now() - 60_000);
    await prisma().session.update({
      where: { id: old.id },
      data: { createdAt: signedInAt, expiresAt, reauthenticatedAt: confirmedAt },
    });
    expect((await admin.caller.me()).secondFactorNeeded).toBe("set-up");
    const enrolment = await admin.caller.security.startTotp({ password: admin.password });
    const turnedOn = await admin.caller.security.confirmTotp({ code: totpOf(enrolment.secret).generate() });
    expect(turnedOn).toEqual({ twoFactorEnabled: true, secondFactorNeeded: "confirm" });
    // better-auth gave the session a new token; the session is the same sign-in.
    const [after, ...others] = await prisma().session.findMany({ where: { userId: admin.userId } });
    expect(others).toEqual([]);
    expect(after?.token).not.toBe(old.token);
    expect(after).toMatchObject({
      createdAt: signedInAt,
      expiresAt,
      reauthenticatedAt: confirmedAt,
      secondFactor: null,
    });
  });

  it("a stale passkey session with the password does not reach step-up by enrolling an authenticator app", async () => {
    const { members } = await orgWithRoles();
    const admin = members.admin;
    const passkey = new SoftPasskey();
    await passkey.storeFor(admin.userId);
    const signedIn = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    const stolen = { request: browserRequest(signedIn.cookie) };
    const caller = createSettingsCaller(stolen);
    await ageSession(stolen, 3 * 24 * 60);
    const refused = await refusal(caller.security.startTotp({ password: admin.password }));
    expect(refused.cause).toBeInstanceOf(StepUpRequiredError);
    expect(refused.message).toMatch(/^Confirm it's you with your passkey first/);
    expect(await prisma().twoFactor.count({ where: { userId: admin.userId } })).toBe(0);
    expect(
      (await refusal(caller.apiKeys.create({ name: "Live", mode: "live", scopes: ["deals:read"] }))).cause,
    ).toBeInstanceOf(StepUpRequiredError);
  });

  it("removing the last factor makes no session two-factor any more: the organisation asks for one again", async () => {
    const { members } = await orgWithRoles();
    await members.owner.caller.team.setRequireTwoFactor({ required: true });
    const admin = members.admin;
    const passkey = new SoftPasskey();
    await passkey.storeFor(admin.userId);
    const signedIn = await signInWithPasskey(passkey, FLAGS.UP | FLAGS.UV);
    const caller = createSettingsCaller({ request: browserRequest(signedIn.cookie) });
    expect((await caller.me()).secondFactorNeeded).toBeNull();
    const [row] = await prisma().passkey.findMany({ where: { userId: admin.userId } });
    await caller.security.removePasskey({ id: row?.id as string });
    expect(await caller.me()).toMatchObject({ secondFactorNeeded: "set-up", secondFactor: { session: null } });
    expect(
      (await refusal(caller.webhooks.create({ url: "https://hooks.example.com/x", events: ["*"] }))).message,
    ).toMatch(/set up an authenticator app or a passkey/);
  });
});

describe("refusals say so: their status and words, never a 500", () => {
  it("wrong password, wrong code, a reused backup code, an existing member, the last owner", async () => {
    const { orgId, members } = await orgWithRoles();
    expect(await refusal(members.viewer.caller.security.startTotp({ password: "not it at all" }))).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      message: "The password is not right",
    });
    const { totp, backupCodes } = await enrolTotp(members.developer);
    const { caller } = await signInWithCode(members.developer, totp);
    expect(await refusal(caller.security.confirm({ code: "12345" }))).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      message: "The code is not right: enter the current one from your app",
    });
    await caller.security.confirm({ code: backupCodes[1] as string, backup: true });
    expect(await refusal(caller.security.confirm({ code: backupCodes[1] as string, backup: true }))).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      message: "This backup code is not right or was already used",
    });
    expect(
      await refusal(members.owner.caller.team.invite({ email: members.viewer.email, role: "viewer" })),
    ).toMatchObject({ code: "UNPROCESSABLE_CONTENT", message: "This person is already a member" });
    const ownerId = await memberIdOf(orgId, members.owner.userId);
    expect(await refusal(members.owner.caller.team.removeMember({ memberId: ownerId }))).toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      message: "An organisation always keeps at least one owner",
    });
    expect(await refusal(members.owner.caller.team.changeRole({ memberId: ownerId, role: "admin" }))).toMatchObject({
      code: "FORBIDDEN",
      message: "Owners keep their role: an owner transfers ownership to change it",
    });
  });

  it("an unexpected failure is a generic 500 and one log line with the request id and the procedure", async () => {
    const logs = captureLog();
    const requestId = `req_${randomBytes(12).toString("hex")}`;
    const broken = createSettingsCaller({
      // A request without headers is a programming error, not a refusal.
      request: { origin: TEST_ORIGIN, headers: undefined as unknown as Headers, ip: null, userAgent: null, requestId },
    });
    const error = await refusal(broken.me());
    expect(error.code).toBe("INTERNAL_SERVER_ERROR");
    const line = logs.lines().find((entry) => entry.msg === "settings procedure failed");
    logs.restore();
    expect(line).toMatchObject({ level: "error", requestId, procedure: "me", err: expect.any(Object) });
  });
});

describe("team changes take turns per organisation", () => {
  it("two transfers of ownership at once: exactly one happens and the organisation has one owner", async () => {
    const { orgId, members } = await orgWithRoles();
    const [adminId, viewerId] = await Promise.all([
      memberIdOf(orgId, members.admin.userId),
      memberIdOf(orgId, members.viewer.userId),
    ]);
    const results = await Promise.allSettled([
      members.owner.caller.team.transferOwnership({ memberId: adminId }),
      members.owner.caller.team.transferOwnership({ memberId: viewerId }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(results.find((result) => result.status === "rejected")).toMatchObject({
      reason: { code: "FORBIDDEN", message: expect.stringMatching(/^Your role \(admin\) cannot transfer ownership/) },
    });
    const owners = await prisma().member.findMany({ where: { orgId, role: "owner" }, select: { userId: true } });
    expect(owners).toHaveLength(1);
    expect([members.admin.userId, members.viewer.userId]).toContain(owners[0]?.userId);
    expect(
      await prisma().settingsAuditEntry.count({ where: { orgId, action: "organisation.ownershipTransferred" } }),
    ).toBe(1);
  });

  it("two owners removing each other at once: one removal happens, one owner stays", async () => {
    const { orgId, members } = await orgWithRoles();
    const second = await addMember(orgId, "owner", "co-owner");
    const [firstId, secondId] = await Promise.all([
      memberIdOf(orgId, members.owner.userId),
      memberIdOf(orgId, second.userId),
    ]);
    const results = await Promise.allSettled([
      members.owner.caller.team.removeMember({ memberId: secondId }),
      second.caller.team.removeMember({ memberId: firstId }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(await prisma().member.count({ where: { orgId, role: "owner" } })).toBe(1);
    expect(results.find((result) => result.status === "rejected")).toMatchObject({
      reason: {
        code: "FORBIDDEN",
        message: expect.stringMatching(/^You are not a member of this organisation any more/),
      },
    });
  });
});
