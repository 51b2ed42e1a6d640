// Invitations to an organisation on better-auth, against the real PostgreSQL: the link shown once and mailed through
// SMTP (a local smtp-server sink reads the message), listed without it, resent as a new link, revoked, accepted by
// someone new (name and password) or by someone with an account, refused to anyone else, expired after 7 days; and
// no sign-up without an invitation.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { authFor, INVITATION_TTL_SECONDS } from "../../../server/identity/better-auth";
import {
  acceptInvitationSignedIn,
  acceptInvitationWithNewAccount,
  getInvitationPage,
} from "../../../server/identity/team/accept-invitation";
import { decoded, type Mail, type MailSink, startMailSink } from "../../helpers/mail-sink";
import { browserRequest, memberIdOf, orgWithRoles, signIn, TEST_ORIGIN } from "../../helpers/members";

let sink: MailSink;
let inbox: Mail[];

beforeAll(async () => {
  sink = await startMailSink();
  inbox = sink.inbox;
});

afterAll(async () => {
  await sink.close();
  await closeDb();
});

const idOf = (link: string) => link.split("/").at(-1) as string;

describe("invitations", () => {
  it("an admin invites: the link is shown once with its 7-day expiry and mailed; the list never shows it", async () => {
    const { orgId, slug, members } = await orgWithRoles();
    const email = `colleague-${Date.now()}@example.com`;
    const invited = await members.admin.caller.team.invite({ email: email.toUpperCase(), role: "developer" });
    expect(invited).toMatchObject({ email, role: "developer", mailed: "sent" });
    expect(invited.link).toMatch(new RegExp(`^${TEST_ORIGIN}/invite/[A-Za-z0-9]{32}$`));
    const seconds = (invited.expiresAt.getTime() - Date.now()) / 1000;
    expect(seconds).toBeGreaterThan(INVITATION_TTL_SECONDS - 60);
    expect(seconds).toBeLessThanOrEqual(INVITATION_TTL_SECONDS);

    const mail = inbox.find((message) => message.to.includes(email));
    expect(mail?.from).toBe("crm@example.com");
    const text = decoded(mail?.raw ?? "");
    expect(text).toContain(`Subject: Join ${slug} on MSP CRM`);
    expect(text).toContain(`${members.admin.email} invited you to join ${slug} as developer.`);
    expect(text).toContain(`Accept the invitation: ${invited.link}`);

    const listed = await members.owner.caller.team.invitations();
    expect(listed).toEqual([
      {
        email,
        role: "developer",
        expiresAt: invited.expiresAt,
        expired: false,
        invitedBy: members.admin.email,
        createdAt: expect.any(Date),
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(idOf(invited.link));
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, action: "invitation.created" },
        select: { actorEmail: true, target: true, details: true },
      }),
    ).toEqual({ actorEmail: members.admin.email, target: email, details: { role: "developer" } });
  });

  it("resending makes a new link (the old one stops working); revoking ends it; an owner role cannot be given", async () => {
    const { members } = await orgWithRoles();
    const email = `resend-${Date.now()}@example.com`;
    const first = await members.owner.caller.team.invite({ email, role: "viewer" });
    const second = await members.owner.caller.team.resendInvitation({ email });
    expect(idOf(second.link)).not.toBe(idOf(first.link));
    expect((await getInvitationPage(idOf(first.link)))?.status).toBe("canceled");
    expect((await getInvitationPage(idOf(second.link)))?.status).toBe("pending");
    expect(await members.owner.caller.team.invitations()).toHaveLength(1);

    await members.admin.caller.team.revokeInvitation({ email });
    expect((await getInvitationPage(idOf(second.link)))?.status).toBe("canceled");
    await expect(
      acceptInvitationWithNewAccount(browserRequest(), idOf(second.link), {
        name: "Late",
        password: "a long password",
      }),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(members.owner.caller.team.invite({ email: "boss@example.com", role: "owner" })).rejects.toMatchObject({
      code: "UNPROCESSABLE_CONTENT",
      message: expect.stringContaining("Role must be one of admin, developer, viewer"),
    });
    await expect(
      members.owner.caller.team.invite({ email: members.viewer.email, role: "viewer" }),
    ).rejects.toMatchObject({
      message: "This person is already a member",
    });
  });

  it("someone new sets a name and password, is signed in and is a member with the role", async () => {
    const { orgId, members } = await orgWithRoles();
    const email = `newcomer-${Date.now()}@example.com`;
    const { link } = await members.owner.caller.team.invite({ email, role: "developer" });
    const page = await getInvitationPage(idOf(link));
    expect(page).toMatchObject({
      email,
      role: "developer",
      invitedBy: { email: members.owner.email },
      hasAccount: false,
    });
    await expect(
      acceptInvitationWithNewAccount(browserRequest(), idOf(link), { name: "New", password: "short" }),
    ).rejects.toMatchObject({ message: "Password must be at least 10 characters" });
    await acceptInvitationWithNewAccount(browserRequest(), idOf(link), {
      name: "New Comer",
      password: "a long password",
    });
    const user = await prisma().user.findUniqueOrThrow({ where: { email } });
    expect(user).toMatchObject({ name: "New Comer", emailVerified: true });
    expect(await prisma().member.findFirst({ where: { orgId, userId: user.id } })).toMatchObject({ role: "developer" });
    const request = await signIn(email, "a long password");
    const session = await authFor(TEST_ORIGIN).api.getSession({ headers: request.headers });
    expect(session?.session).toMatchObject({ activeOrganizationId: orgId });
    expect((await getInvitationPage(idOf(link)))?.status).toBe("accepted");
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, action: "invitation.accepted" },
        select: { actorEmail: true },
      }),
    ).toEqual({ actorEmail: email });
  });

  it("someone with an account signs in and joins a second organisation; nobody else can use the link", async () => {
    const first = await orgWithRoles();
    const second = await orgWithRoles();
    const user = first.members.developer;
    const { link } = await second.members.owner.caller.team.invite({ email: user.email, role: "viewer" });
    expect((await getInvitationPage(idOf(link)))?.hasAccount).toBe(true);
    // Signed in as someone else: refused.
    await expect(acceptInvitationSignedIn(second.members.viewer.request, idOf(link))).rejects.toMatchObject({
      message: "This invitation is for another email address",
    });
    // And a new account for an email that has one is refused.
    await expect(
      acceptInvitationWithNewAccount(browserRequest(), idOf(link), { name: "Squatter", password: "a long password" }),
    ).rejects.toMatchObject({ code: "validation_error" });
    await acceptInvitationSignedIn(user.request, idOf(link));
    expect(await prisma().member.count({ where: { userId: user.userId } })).toBe(2);
    // Their session now acts on the new organisation, as a viewer.
    expect(await user.caller.me()).toMatchObject({ org: { id: second.orgId }, role: "viewer" });
  });

  it("an expired invitation says so and cannot be accepted", async () => {
    const { members } = await orgWithRoles();
    const email = `expired-${Date.now()}@example.com`;
    const { link } = await members.owner.caller.team.invite({ email, role: "viewer" });
    await prisma().invitation.update({ where: { id: idOf(link) }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await getInvitationPage(idOf(link)))?.status).toBe("expired");
    expect(await members.owner.caller.team.invitations()).toEqual([expect.objectContaining({ email, expired: true })]);
    await expect(
      acceptInvitationWithNewAccount(browserRequest(), idOf(link), { name: "Too Late", password: "a long password" }),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(await getInvitationPage("not-an-invitation")).toBeNull();
  });
});

describe("invitations do not outlive their inviter's rights", () => {
  it("an admin demoted to viewer: the invitations they sent are withdrawn, recorded, and their links make nobody a member", async () => {
    const { orgId, members } = await orgWithRoles();
    const email = `would-be-admin-${Date.now()}@example.com`;
    const { link } = await members.admin.caller.team.invite({ email, role: "admin" });
    const adminId = await memberIdOf(orgId, members.admin.userId);
    await members.owner.caller.team.changeRole({ memberId: adminId, role: "viewer" });
    expect((await getInvitationPage(idOf(link)))?.status).toBe("canceled");
    await expect(
      acceptInvitationWithNewAccount(browserRequest(), idOf(link), { name: "Late", password: "a long password" }),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(await prisma().member.count({ where: { orgId, role: "admin" } })).toBe(0);
    expect(
      await prisma().settingsAuditEntry.findFirst({
        where: { orgId, action: "invitation.revoked", target: email },
        select: { actorEmail: true, details: true },
      }),
    ).toEqual({
      actorEmail: members.owner.email,
      details: { role: "admin", reason: `${members.admin.email} became viewer` },
    });
  });

  it("a removed member's invitations are withdrawn with them", async () => {
    const { orgId, members } = await orgWithRoles();
    const email = `orphan-${Date.now()}@example.com`;
    const { link } = await members.admin.caller.team.invite({ email, role: "developer" });
    await members.owner.caller.team.removeMember({ memberId: await memberIdOf(orgId, members.admin.userId) });
    expect((await getInvitationPage(idOf(link)))?.status).toBe("canceled");
  });

  it("an invitation whose inviter can no longer give its role is refused when accepted (one sent before this rule)", async () => {
    const { orgId, members } = await orgWithRoles();
    const invitee = (await orgWithRoles()).members.developer;
    const { link } = await members.admin.caller.team.invite({ email: invitee.email, role: "admin" });
    // As an invitation from before withdrawals existed: its inviter was demoted, the invitation left pending.
    await prisma().member.updateMany({ where: { orgId, userId: members.admin.userId }, data: { role: "viewer" } });
    await expect(acceptInvitationSignedIn(invitee.request, idOf(link))).rejects.toMatchObject({
      code: "not_found",
      message: expect.stringMatching(/^This invitation was withdrawn/),
    });
    expect(await prisma().member.count({ where: { orgId, userId: invitee.userId } })).toBe(0);
  });

  it("a refused acceptance with a new account leaves no user, password or session behind", async () => {
    const { orgId, members } = await orgWithRoles();
    const email = `refused-newcomer-${Date.now()}@example.com`;
    const { link } = await members.admin.caller.team.invite({ email, role: "admin" });
    // As an invitation from before withdrawals existed: its inviter was demoted, the invitation left pending.
    await prisma().member.updateMany({ where: { orgId, userId: members.admin.userId }, data: { role: "viewer" } });
    await expect(
      acceptInvitationWithNewAccount(browserRequest(), idOf(link), { name: "Link Holder", password: "their password" }),
    ).rejects.toMatchObject({ code: "not_found", message: expect.stringMatching(/^This invitation was withdrawn/) });
    expect(await prisma().user.count({ where: { email } })).toBe(0);
    expect(await prisma().authAccount.count({ where: { user: { email } } })).toBe(0);
    expect(await prisma().session.count({ where: { user: { email } } })).toBe(0);
    // Nobody can sign in with the password the link holder chose.
    await expect(signIn(email, "their password")).rejects.toMatchObject({ statusCode: 401 });
    expect((await getInvitationPage(idOf(link)))?.hasAccount).toBe(false);
  });

  it("a demotion and an invitation by the same admin at once take turns: no admin invitation from a viewer remains", async () => {
    const { orgId, members } = await orgWithRoles();
    const adminId = await memberIdOf(orgId, members.admin.userId);
    const email = `race-${Date.now()}@example.com`;
    await Promise.allSettled([
      members.owner.caller.team.changeRole({ memberId: adminId, role: "viewer" }),
      members.admin.caller.team.invite({ email, role: "admin" }),
    ]);
    expect(await prisma().member.findFirst({ where: { id: adminId }, select: { role: true } })).toEqual({
      role: "viewer",
    });
    expect(await prisma().invitation.count({ where: { orgId, email, status: "pending" } })).toBe(0);
  });
});

describe("sign-up", () => {
  it("is refused without a pending invitation for the email, whoever calls it", async () => {
    const refused = authFor(TEST_ORIGIN).api.signUpEmail({
      headers: browserRequest().headers,
      body: { email: `walk-in-${Date.now()}@example.com`, password: "a long password", name: "Walk In" },
    });
    await expect(refused).rejects.toMatchObject({ statusCode: 403, body: { code: "INVITATION_REQUIRED" } });
    expect(await prisma().user.count({ where: { email: { startsWith: "walk-in-" } } })).toBe(0);
  });
});
