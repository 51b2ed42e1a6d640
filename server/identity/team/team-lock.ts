// Team changes take turns per organisation (docs/architecture.md, "Settings: sign-in, team and roles"): inviting,
// changing a role, removing a member and transferring ownership hold the organisation's row lock for their
// transaction and check the acting member's role again under it, so two at once cannot leave two owners, or none,
// and an invitation cannot be sent by someone demoted a moment before.

import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordRefusal } from "../audit-trail/service";
import { can, isRole, type Permission, type Role, refusalMessage } from "../roles";
import { actorOf, type SignedInMember } from "../session";

// Carries a refusal out of the transaction it rolls back, to be recorded after it.
class Refused extends Error {
  constructor(readonly refusal: ApiError) {
    super(refusal.message);
  }
}

/**
 * Refuses the team change being made under {@link underTeamLock}: 403 with `message`, recorded as `action.refused`
 * once the transaction has rolled back.
 */
export function refuse(message: string): never {
  throw new Refused(new ApiError("insufficient_scope", message));
}

/** Refuses unless `role` holds `permission`, in the words of every settings refusal. */
export function requirePermission(member: SignedInMember, role: Role, permission: Permission): void {
  if (!can(role, permission)) refuse(refusalMessage(role, permission, member.org.name));
}

/**
 * Runs a team change in a transaction that first takes the organisation's row lock (`FOR NO KEY UPDATE`: it orders
 * team changes of one organisation without blocking the inserts that reference the organisation) and reads the acting
 * member's role as it is now, which `work` checks again: the procedure's check ran before the lock.
 * @param attempted the procedure's name, for the audit entry of a refusal.
 * @throws ApiError `insufficient_scope` (403) when the acting member is no longer a member or `work` refuses
 *         ({@link refuse}), recorded as `action.refused`; whatever `work` throws otherwise.
 */
export async function underTeamLock<T>(
  member: SignedInMember,
  attempted: string,
  target: string | null,
  work: (now: { role: Role }) => Promise<T>,
): Promise<T> {
  try {
    return await transaction(async () => {
      await prisma().$queryRaw`SELECT id FROM "Organisation" WHERE id = ${member.org.id} FOR NO KEY UPDATE`;
      const row = await prisma().member.findUnique({
        where: { orgId_userId: { orgId: member.org.id, userId: member.user.id } },
        select: { role: true },
      });
      if (!row || !isRole(row.role)) {
        refuse("You are not a member of this organisation any more: ask an owner or admin to invite you again");
      }
      return work({ role: row.role });
    });
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    await recordRefusal(member.org.id, actorOf(member), attempted, error.refusal.message, target);
    throw error.refusal;
  }
}
