// The team page's reads (docs/architecture.md, "Settings: sign-in, team and roles"): members with their roles, second
// factors and the keys they created, and pending invitations (never their links).

import { prisma } from "../../db/transaction";
import { ApiError } from "../../errors";
import { isRole, type Role } from "../roles";

/** A key a member created that still works, as the removal confirmation lists it. */
export interface MemberKeyView {
  id: string;
  name: string;
  prefix: string;
  isTest: boolean;
  /** An organisation service key: removing or deprovisioning the member leaves it working (§11.5). */
  serviceKey: boolean;
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
  /** The keys they created that still work (they belong to the organisation and outlive the membership). */
  keys: MemberKeyView[];
}

const ORDER: readonly Role[] = ["owner", "admin", "developer", "viewer"];

/** The organisation's members, owners first, then by email, each with the working keys they created. */
export async function listMembers(orgId: string): Promise<MemberView[]> {
  const [rows, keys] = await Promise.all([
    prisma().member.findMany({
      where: { orgId },
      select: {
        id: true,
        role: true,
        createdAt: true,
        user: {
          select: { id: true, email: true, name: true, twoFactorEnabled: true, _count: { select: { passkeys: true } } },
        },
      },
    }),
    prisma().apiKey.findMany({
      where: {
        orgId,
        createdById: { not: null },
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
      },
      select: { id: true, name: true, prefix: true, isTest: true, serviceKey: true, createdById: true },
      orderBy: { createdAt: "desc" },
    }),
  ]);
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
      keys: keys.filter((key) => key.createdById === row.user.id).map(({ createdById: _creator, ...key }) => key),
    }))
    .sort((a, b) => ORDER.indexOf(a.role) - ORDER.indexOf(b.role) || a.email.localeCompare(b.email));
}

/**
 * One member of the organisation (the target's role decides who may change it).
 * @throws ApiError `not_found` (404) when `memberId` is not a member of the organisation.
 */
export async function getMember(orgId: string, memberId: string): Promise<MemberView> {
  const found = (await listMembers(orgId)).find((entry) => entry.id === memberId);
  if (!found) throw new ApiError("not_found", "Member not found");
  return found;
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
