// An organisation's team (docs/architecture.md, "Settings: sign-in, team and roles"): members and their roles,
// invitations (7 days, the link shown once), role changes, removal, ownership transfer and deletion, through
// better-auth's organization plugin; plus the operator command's users and links. Who may do what is decided by the
// caller (the settings router's `authorize`); these functions keep the invariants (an organisation keeps an owner).

import { parseSetCookieHeader } from "better-auth/cookies";
import { makeSignature } from "better-auth/crypto";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../auth/passwords";
import { isRole, type Role } from "../auth/roles";
import { prisma, transaction } from "../db/transaction";
import { ApiError } from "../errors";
import { type Auth, authFor, capturePasswordResetToken, isAuthError } from "./auth";
import { sendMail } from "./mail";
import { recordSettingsAudit, recordSettingsAuditForUser, type SettingsActor } from "./settings-audit";
import { actorOf, type SettingsRequest, type SignedInMember } from "./settings-session";

/** Roles an invitation or a role change may give: every role but owner (ownership is transferred, never granted). */
export const ASSIGNABLE_ROLES = ["admin", "developer", "viewer"] as const;

/** A role an invitation or a role change may give. */
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

// Deliberately loose (one @, no spaces, a dot in the domain), as the address is checked by the mail it receives.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Normalises an email address for storage and lookup: trimmed and lower-cased, so sign-in is case-insensitive.
 * @throws ApiError `validation_error` (422) on `email` when it is not an address or longer than 254 characters.
 */
export function normaliseEmail(email: string): string {
  const normalised = email.trim().toLowerCase();
  if (normalised.length > 254 || !EMAIL_PATTERN.test(normalised)) {
    throw new ApiError("validation_error", "Email must be an email address", {
      details: [{ path: ["email"], message: "Email must be an email address" }],
    });
  }
  return normalised;
}

/**
 * Checks a new password: {@link PASSWORD_MIN_LENGTH} to {@link PASSWORD_MAX_LENGTH} characters.
 * @throws ApiError `validation_error` (422) on `password` naming the rule it breaks.
 */
export function assertPasswordAcceptable(password: string): void {
  const problem =
    password.length < PASSWORD_MIN_LENGTH
      ? `Password must be at least ${PASSWORD_MIN_LENGTH} characters`
      : password.length > PASSWORD_MAX_LENGTH
        ? `Password must be at most ${PASSWORD_MAX_LENGTH} characters`
        : null;
  if (problem) throw new ApiError("validation_error", problem, { details: [{ path: ["password"], message: problem }] });
}

function assignable(role: string): AssignableRole {
  if ((ASSIGNABLE_ROLES as readonly string[]).includes(role)) return role as AssignableRole;
  const message = `Role must be one of ${ASSIGNABLE_ROLES.join(", ")} (ownership is transferred, not given)`;
  throw new ApiError("validation_error", message, { details: [{ path: ["role"], message }] });
}

// better-auth refuses with its own codes; the pages show ours (422, naming the field) instead.
const AUTH_MESSAGES: Record<string, { message: string; path?: string }> = {
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: { message: "This person is already a member", path: "email" },
  INVITATION_LIMIT_REACHED: { message: "The organisation has 100 pending invitations: revoke some first" },
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: { message: "The organisation has reached 100 members" },
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: { message: "An organisation always keeps at least one owner" },
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER: { message: "An organisation always keeps at least one owner" },
  INVITATION_NOT_FOUND: { message: "This invitation was revoked, accepted or has expired" },
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: { message: "This invitation is for another email address" },
  MEMBER_NOT_FOUND: { message: "Member not found" },
};

/** Runs a better-auth call, turning its refusals into ApiErrors the settings pages can show. */
async function viaAuth<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isAuthError(error)) throw error;
    const code = (error.body as { code?: string } | undefined)?.code ?? "";
    const known = AUTH_MESSAGES[code];
    if (code === "INVITATION_NOT_FOUND" || code === "MEMBER_NOT_FOUND")
      throw new ApiError("not_found", known?.message ?? error.message);
    const message = known?.message ?? error.message;
    throw new ApiError("validation_error", message, {
      details: [{ path: known?.path ? [known.path] : [], message }],
    });
  }
}

/** A member as the team page lists it. */
export interface MemberView {
  id: string;
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
  /** An authenticator app or a passkey is set up. */
  secondFactor: boolean;
}

/** The organisation's members, owners first, then by email. */
export async function listMembers(orgId: string): Promise<MemberView[]> {
  const rows = await prisma().member.findMany({
    where: { orgId },
    select: {
      id: true,
      role: true,
      createdAt: true,
      user: {
        select: { id: true, email: true, name: true, twoFactorEnabled: true, _count: { select: { passkeys: true } } },
      },
    },
  });
  const order = ["owner", "admin", "developer", "viewer"];
  return rows
    .filter((row) => isRole(row.role))
    .map((row) => ({
      id: row.id,
      userId: row.user.id,
      email: row.user.email,
      name: row.user.name,
      role: row.role as Role,
      joinedAt: row.createdAt,
      secondFactor: row.user.twoFactorEnabled || row.user._count.passkeys > 0,
    }))
    .sort((a, b) => order.indexOf(a.role) - order.indexOf(b.role) || a.email.localeCompare(b.email));
}

/** A pending invitation as the team page lists it: never its id, which is the secret of its link. */
export interface InvitationView {
  email: string;
  role: string;
  expiresAt: Date;
  expired: boolean;
  invitedBy: string;
  createdAt: Date;
}

/** The organisation's pending invitations (expired ones flagged, to resend), newest first. */
export async function listInvitations(orgId: string): Promise<InvitationView[]> {
  const rows = await prisma().invitation.findMany({
    where: { orgId, status: "pending" },
    select: { email: true, role: true, expiresAt: true, createdAt: true, inviter: { select: { email: true } } },
    orderBy: { createdAt: "desc" },
  });
  const now = Date.now();
  return rows.map((row) => ({
    email: row.email,
    role: row.role,
    expiresAt: row.expiresAt,
    expired: row.expiresAt.getTime() <= now,
    invitedBy: row.inviter.email,
    createdAt: row.createdAt,
  }));
}

/** A new invitation: its link (shown once), its expiry, and whether it was also mailed. */
export interface CreatedInvitation {
  email: string;
  role: AssignableRole;
  link: string;
  expiresAt: Date;
  mailed: "sent" | "not-configured" | "failed";
}

/** The link of an invitation: `<origin>/invite/<id>`. */
export function invitationLink(origin: string, invitationId: string): string {
  return `${origin}/invite/${encodeURIComponent(invitationId)}`;
}

async function mailInvitation(
  to: string,
  link: string,
  orgName: string,
  inviter: string,
  role: string,
  expiresAt: Date,
) {
  return sendMail({
    to,
    subject: `Join ${orgName} on MSP CRM`,
    text: [
      `${inviter} invited you to join ${orgName} as ${role}.`,
      "",
      `Accept the invitation: ${link}`,
      "",
      `The link works until ${expiresAt.toUTCString()}. If you did not expect it, ignore this message.`,
    ].join("\n"),
  });
}

/**
 * Invites `email` to the organisation with a role other than owner (better-auth's invitation; a pending one for the
 * same email is replaced), records it, and mails the link when mail is configured.
 * @returns the link to show once, with its expiry (7 days).
 * @throws ApiError `validation_error` (422) for a malformed email, an owner role, or someone already a member.
 */
export async function inviteMember(
  member: Pick<SignedInMember, "request" | "user" | "org">,
  input: { email: string; role: string },
  actor: SettingsActor = actorOf(member),
): Promise<CreatedInvitation> {
  const email = normaliseEmail(input.email);
  const role = assignable(input.role);
  const auth = authFor(member.request.origin);
  const invitation = await transaction(async () => {
    const created = await viaAuth(() =>
      auth.api.createInvitation({
        headers: member.request.headers,
        body: { email, role, organizationId: member.org.id },
      }),
    );
    await recordSettingsAudit(member.org.id, actor, {
      action: "invitation.created",
      target: email,
      details: { role },
    });
    return created;
  });
  const link = invitationLink(member.request.origin, invitation.id);
  const expiresAt = new Date(invitation.expiresAt);
  const mailed = await mailInvitation(email, link, member.org.name, member.user.email, role, expiresAt);
  return { email, role, link, expiresAt, mailed };
}

/**
 * Sends a pending invitation again as a new link (the old link stops working), with a new 7 days.
 * @throws ApiError `not_found` (404) when there is no pending invitation for the email.
 */
export async function resendInvitation(member: SignedInMember, email: string): Promise<CreatedInvitation> {
  const pending = await prisma().invitation.findFirst({
    where: { orgId: member.org.id, email: email.trim().toLowerCase(), status: "pending" },
    select: { role: true },
  });
  if (!pending) throw new ApiError("not_found", "No pending invitation for this email");
  return inviteMember(member, { email, role: pending.role });
}

/**
 * Revokes the pending invitation of `email`: its link stops working.
 * @throws ApiError `not_found` (404) when there is none.
 */
export async function revokeInvitation(member: SignedInMember, email: string): Promise<void> {
  const pending = await prisma().invitation.findFirst({
    where: { orgId: member.org.id, email: email.trim().toLowerCase(), status: "pending" },
    select: { id: true, email: true, role: true },
  });
  if (!pending) throw new ApiError("not_found", "No pending invitation for this email");
  await transaction(async () => {
    await viaAuth(() =>
      authFor(member.request.origin).api.cancelInvitation({
        headers: member.request.headers,
        body: { invitationId: pending.id },
      }),
    );
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "invitation.revoked",
      target: pending.email,
      details: { role: pending.role },
    });
  });
}

/**
 * One member of the organisation (for the router's checks: the target's role decides who may change it).
 * @throws ApiError `not_found` (404) when `memberId` is not a member of the organisation.
 */
export async function getMember(orgId: string, memberId: string): Promise<MemberView> {
  const found = (await listMembers(orgId)).find((entry) => entry.id === memberId);
  if (!found) throw new ApiError("not_found", "Member not found");
  return found;
}

/**
 * Gives a member another role (never owner, never an owner's: see {@link transferOwnership}); takes effect on their
 * next request.
 * @throws ApiError `not_found` (404) for an unknown member; `validation_error` (422) for an unassignable role.
 */
export async function changeRole(member: SignedInMember, memberId: string, role: string): Promise<MemberView> {
  const next = assignable(role);
  const target = await getMember(member.org.id, memberId);
  if (target.role === next) return target;
  await transaction(async () => {
    await viaAuth(() =>
      authFor(member.request.origin).api.updateMemberRole({
        headers: member.request.headers,
        body: { memberId, role: next, organizationId: member.org.id },
      }),
    );
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "member.roleChanged",
      target: target.email,
      details: { from: target.role, to: next },
    });
  });
  return { ...target, role: next };
}

/**
 * Removes a member from the organisation; their next request is refused. The last owner cannot be removed.
 * @throws ApiError `not_found` (404) for an unknown member; `validation_error` (422) for the last owner.
 */
export async function removeMember(member: SignedInMember, memberId: string): Promise<void> {
  const target = await getMember(member.org.id, memberId);
  await transaction(async () => {
    await viaAuth(() =>
      authFor(member.request.origin).api.removeMember({
        headers: member.request.headers,
        body: { memberIdOrEmail: memberId, organizationId: member.org.id },
      }),
    );
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "member.removed",
      target: target.email,
      details: { role: target.role },
    });
  });
}

/**
 * Makes another member an owner and the acting owner an admin, in one transaction.
 * @throws ApiError `not_found` (404) for an unknown member; `validation_error` (422) when the target is the actor or
 *         already an owner.
 */
export async function transferOwnership(member: SignedInMember, memberId: string): Promise<void> {
  const target = await getMember(member.org.id, memberId);
  if (target.userId === member.user.id || target.role === "owner") {
    const message = "Choose a member who is not an owner";
    throw new ApiError("validation_error", message, { details: [{ path: ["memberId"], message }] });
  }
  const { api } = authFor(member.request.origin);
  const body = { organizationId: member.org.id };
  await transaction(async () => {
    await viaAuth(() =>
      api.updateMemberRole({ headers: member.request.headers, body: { ...body, memberId, role: "owner" } }),
    );
    await viaAuth(() =>
      api.updateMemberRole({
        headers: member.request.headers,
        body: { ...body, memberId: member.memberId, role: "admin" },
      }),
    );
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "organisation.ownershipTransferred",
      target: target.email,
      details: { from: member.user.email, to: target.email },
    });
  });
}

/**
 * Deletes the organisation with everything it holds (keys, endpoints, records, members, its audit trails), once its
 * slug is typed as confirmation. Logged as one JSON line, since its trail goes with it.
 * @throws ApiError `validation_error` (422) on `confirm` when it is not the slug.
 */
export async function deleteOrganisation(member: SignedInMember, confirm: string): Promise<void> {
  if (confirm.trim() !== member.org.slug) {
    const message = `Type the organisation's slug (${member.org.slug}) to confirm`;
    throw new ApiError("validation_error", message, { details: [{ path: ["confirm"], message }] });
  }
  await viaAuth(() =>
    authFor(member.request.origin).api.deleteOrganization({
      headers: member.request.headers,
      body: { organizationId: member.org.id },
    }),
  );
  console.log(
    JSON.stringify({
      level: "info",
      message: "organisation deleted",
      orgId: member.org.id,
      slug: member.org.slug,
      by: member.user.email,
    }),
  );
}

/** Turns the organisation's "require two-factor for owners and admins" on or off. */
export async function setRequireTwoFactor(member: SignedInMember, required: boolean): Promise<void> {
  await transaction(async () => {
    await prisma().organisation.update({ where: { id: member.org.id }, data: { requireTwoFactor: required } });
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "organisation.settingsChanged",
      target: "require two-factor for owners and admins",
      details: { requireTwoFactor: required },
    });
  });
}

/** What the invitation page shows about an invitation, without signing anyone in. */
export interface InvitationPage {
  id: string;
  email: string;
  role: string;
  orgName: string;
  invitedBy: { name: string; email: string };
  expiresAt: Date;
  /** `pending` (can be accepted), or why it cannot: `expired`, `accepted`, `canceled`, `rejected`. */
  status: "pending" | "expired" | "accepted" | "canceled" | "rejected";
  /** Whether a user with the invited email exists: they sign in to accept; otherwise they set a name and password. */
  hasAccount: boolean;
}

/** The invitation behind a link, or null when the id names none. */
export async function getInvitationPage(invitationId: string): Promise<InvitationPage | null> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(invitationId)) return null;
  const row = await prisma().invitation.findUnique({
    where: { id: invitationId },
    select: {
      id: true,
      email: true,
      role: true,
      status: true,
      expiresAt: true,
      org: { select: { name: true } },
      inviter: { select: { name: true, email: true } },
    },
  });
  if (!row) return null;
  const hasAccount = (await prisma().user.count({ where: { email: row.email } })) > 0;
  const status =
    row.status === "pending" && row.expiresAt.getTime() <= Date.now()
      ? "expired"
      : (row.status as InvitationPage["status"]);
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    orgName: row.org.name,
    invitedBy: row.inviter,
    expiresAt: row.expiresAt,
    status,
    hasAccount,
  };
}

/** The `Cookie` header carrying the cookies a better-auth answer set (a sign-up's new session). */
function cookiesFrom(setCookies: string[]): string {
  return setCookies
    .flatMap((header) => [...parseSetCookieHeader(header).entries()])
    .map(([name, cookie]) => `${name}=${cookie.value}`)
    .join("; ");
}

async function accept(auth: Auth, headers: Headers, invitationId: string, actor: SettingsActor) {
  return transaction(async () => {
    const { invitation } = await viaAuth(() => auth.api.acceptInvitation({ headers, body: { invitationId } }));
    await recordSettingsAudit(invitation.organizationId, actor, {
      action: "invitation.accepted",
      target: invitation.email,
      details: { role: invitation.role },
    });
    return invitation;
  });
}

/**
 * Accepts an invitation for someone without an account: creates the user with the invited email, the name and
 * password given, signs them in (the request's response gets the session cookie) and makes them a member.
 * @throws ApiError `not_found` (404) for an invitation that is not pending; `validation_error` (422) for a name or
 *         password breaking the rules, or when the email already has an account (sign in instead).
 */
export async function acceptInvitationWithNewAccount(
  request: SettingsRequest,
  invitationId: string,
  input: { name: string; password: string },
): Promise<{ orgId: string }> {
  const page = await getInvitationPage(invitationId);
  if (page?.status !== "pending") {
    throw new ApiError("not_found", "This invitation was revoked, accepted or has expired");
  }
  if (page.hasAccount) {
    throw new ApiError("validation_error", "This email already has an account: sign in to accept the invitation");
  }
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100) {
    const message = "Name must be 1 to 100 characters";
    throw new ApiError("validation_error", message, { details: [{ path: ["name"], message }] });
  }
  assertPasswordAcceptable(input.password);
  const auth = authFor(request.origin);
  const signedUp = await viaAuth(() =>
    auth.api.signUpEmail({
      headers: request.headers,
      body: { email: page.email, name, password: input.password },
      returnHeaders: true,
    }),
  );
  // The link reached its address's owner, as a verification link would.
  await prisma().user.update({ where: { email: page.email }, data: { emailVerified: true } });
  const headers = new Headers(request.headers);
  headers.set("cookie", cookiesFrom(signedUp.headers.getSetCookie()));
  const user = signedUp.response.user;
  const invitation = await accept(auth, headers, invitationId, {
    userId: user.id,
    email: user.email,
    ip: request.ip,
    userAgent: request.userAgent,
  });
  return { orgId: invitation.organizationId };
}

/**
 * Accepts an invitation as the signed-in user (whose email must be the invited one) and makes its organisation the
 * one the session acts on.
 * @throws ApiError `not_found` (404) for an invitation that is not pending; `validation_error` (422) when it is
 *         addressed to another email.
 */
export async function acceptInvitationSignedIn(
  request: SettingsRequest,
  invitationId: string,
): Promise<{ orgId: string }> {
  const auth = authFor(request.origin);
  const found = await auth.api.getSession({ headers: request.headers });
  if (!found) throw new ApiError("unauthorized", "Sign in to accept the invitation");
  const invitation = await accept(auth, request.headers, invitationId, {
    userId: found.user.id,
    email: found.user.email,
    ip: request.ip,
    userAgent: request.userAgent,
  });
  return { orgId: invitation.organizationId };
}

/**
 * Creates a user who signs in with `password` and makes them a member of the organisation with `role` (the operator
 * command and the demo seed; everyone else joins by invitation).
 * @returns the user's id and stored email.
 * @throws ApiError `validation_error` (422): malformed email, a password breaking the rules, an unknown role, or an
 *         email some user already has.
 */
export async function createMemberUser(
  origin: string,
  orgId: string,
  input: { email: string; password: string; name?: string | null; role: string },
): Promise<{ userId: string; email: string }> {
  const email = normaliseEmail(input.email);
  const role = input.role;
  if (!isRole(role)) {
    const message = "Role must be one of owner, admin, developer, viewer";
    throw new ApiError("validation_error", message, { details: [{ path: ["role"], message }] });
  }
  assertPasswordAcceptable(input.password);
  if ((await prisma().user.count({ where: { email } })) > 0) {
    throw new ApiError("validation_error", "A user with this email already exists", {
      details: [{ path: ["email"], message: "A user with this email already exists" }],
    });
  }
  const auth = authFor(origin);
  const context = await auth.$context;
  const password = await context.password.hash(input.password);
  return transaction(async () => {
    const user = await context.internalAdapter.createUser(
      {
        email,
        name: input.name?.trim() || email.split("@")[0] || email,
        emailVerified: true,
      },
      { method: "admin" },
    );
    await context.internalAdapter.linkAccount({
      userId: user.id,
      providerId: "credential",
      accountId: user.id,
      password,
    });
    await auth.api.addMember({ body: { userId: user.id, role, organizationId: orgId } });
    return { userId: user.id, email: user.email };
  });
}

/** Whether the organisation has an owner yet (the operator command's first user becomes it). */
export async function organisationHasOwner(orgId: string): Promise<boolean> {
  return (await prisma().member.count({ where: { orgId, role: "owner" } })) > 0;
}

/** Sets a user's password (the demo login's regenerated password). */
export async function setPassword(origin: string, userId: string, password: string): Promise<void> {
  assertPasswordAcceptable(password);
  const context = await authFor(origin).$context;
  await context.internalAdapter.updatePassword(userId, await context.password.hash(password));
}

/** Whether `password` signs `userId` in (the demo login's saved password). */
export async function passwordMatches(origin: string, userId: string, password: string): Promise<boolean> {
  const context = await authFor(origin).$context;
  const account = await context.internalAdapter.findCredentialAccount?.(userId);
  const hash = (account as { password?: string | null } | null)?.password;
  return Boolean(hash) && (await context.password.verify({ hash: hash as string, password }));
}

/**
 * Runs `work` as the organisation's first owner through a session made for it and ended right after: how the
 * operator command invites through better-auth as the pages do.
 * @throws ApiError `not_found` (404) when the organisation has no owner yet (create one with `create-user`).
 */
async function asFirstOwner<T>(
  origin: string,
  orgId: string,
  work: (member: SignedInMember) => Promise<T>,
): Promise<T> {
  const owner = await prisma().member.findFirst({
    where: { orgId, role: "owner" },
    orderBy: { createdAt: "asc" },
    select: { id: true, user: { select: { id: true, email: true, name: true } }, org: true },
  });
  if (!owner)
    throw new ApiError("not_found", "The organisation has no owner yet: create one with create-user --role owner");
  const auth = authFor(origin);
  const context = await auth.$context;
  const session = await context.internalAdapter.createSession(owner.user.id, true, { activeOrganizationId: orgId });
  try {
    const signed = `${session.token}.${await makeSignature(session.token, context.secret)}`;
    const headers = new Headers({ cookie: `${context.authCookies.sessionToken.name}=${encodeURIComponent(signed)}` });
    return await work({
      request: { origin, headers, ip: null, userAgent: "npm run admin" },
      session: { id: session.id, createdAt: session.createdAt, expiresAt: session.expiresAt, reauthenticatedAt: null },
      user: { ...owner.user, twoFactorEnabled: false, passkeys: 0 },
      org: owner.org,
      memberId: owner.id,
      role: "owner",
    });
  } finally {
    await context.internalAdapter.deleteSession(session.token);
  }
}

/**
 * Invites someone from the operator command (`npm run admin -- invite`): the invitation names the organisation's
 * first owner as who invited; the audit trail names the operator command.
 * @returns the link (printed once) and its expiry.
 */
export function inviteFromCommand(origin: string, orgId: string, input: { email: string; role: string }) {
  return asFirstOwner(origin, orgId, (owner) =>
    inviteMember(owner, input, {
      userId: null,
      email: "operator (npm run admin)",
      ip: null,
      userAgent: "npm run admin",
    }),
  );
}

/**
 * A one-time password-reset link for `email` (`<origin>/reset-password?token=…`, valid 1 hour): printed by the
 * operator command, also mailed when mail is configured.
 * @throws ApiError `not_found` (404) when no user has the email.
 */
export async function passwordResetLink(origin: string, email: string): Promise<{ link: string; expiresAt: Date }> {
  const normalised = normaliseEmail(email);
  if ((await prisma().user.count({ where: { email: normalised } })) === 0) {
    throw new ApiError("not_found", `No user has the email ${normalised}`);
  }
  const auth = authFor(origin);
  const token = await capturePasswordResetToken(() => auth.api.requestPasswordReset({ body: { email: normalised } }));
  if (!token) throw new Error("better-auth issued no reset token");
  const link = `${origin}/reset-password?token=${encodeURIComponent(token)}`;
  const expiresAt = new Date(Date.now() + 60 * 60 * 1000);
  await sendMail({
    to: normalised,
    subject: "Reset your MSP CRM password",
    text: `Set a new password: ${link}\n\nThe link works once, until ${expiresAt.toUTCString()}.`,
  });
  return { link, expiresAt };
}

/**
 * Sets a new password with a reset link's token (every session of the user ends), and records it.
 * @throws ApiError `validation_error` (422) for a password breaking the rules or a token that is unknown, used or
 *         expired.
 */
export async function resetPassword(request: SettingsRequest, token: string, password: string): Promise<void> {
  assertPasswordAcceptable(password);
  const verification = await prisma().verification.findFirst({
    where: { identifier: `reset-password:${token}`, expiresAt: { gt: new Date() } },
    select: { value: true },
  });
  const auth = authFor(request.origin);
  try {
    await auth.api.resetPassword({ headers: request.headers, body: { newPassword: password, token } });
  } catch (error) {
    if (!isAuthError(error)) throw error;
    const message = "This reset link is not valid any more: ask for a new one";
    throw new ApiError("validation_error", message, { details: [{ path: ["token"], message }] });
  }
  const user = verification
    ? await prisma().user.findUnique({ where: { id: verification.value }, select: { id: true, email: true } })
    : null;
  if (user) {
    await recordSettingsAuditForUser(user.id, {
      actorEmail: user.email,
      action: "password.reset",
      ip: request.ip,
      userAgent: request.userAgent,
    });
  }
}
