// The operator command's team use cases (`npm run admin`, README "Operator command") and the demo login: users made
// directly with a role, passwords set and checked, and invitations sent as the organisation's first owner.
import { makeSignature } from "better-auth/crypto";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { assertPasswordAcceptable, normaliseEmail } from "../passwords";
import { isRole } from "../roles";
import type { SignedInMember } from "../session";
import { inviteMember } from "./invite-member";

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
    await viaAuth(() => auth.api.addMember({ body: { userId: user.id, role, organizationId: orgId } }));
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
      session: {
        id: session.id,
        createdAt: session.createdAt,
        expiresAt: session.expiresAt,
        reauthenticatedAt: null,
        secondFactor: null,
      },
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
