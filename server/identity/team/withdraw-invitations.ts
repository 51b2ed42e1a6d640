// Withdrawing the invitations a member can no longer give (docs/api-contract.md §5.10): after a role change or a
// removal, by hand, by the identity provider's groups or by the directory. Its own module, free of the session, so
// the SSO sign-in (run inside better-auth) can use it too.
import { prisma } from "../../db/transaction";
import { type AuditActor, recordSettingsAudit } from "../audit-trail/service";
import { grantableRoles } from "../roles";

/**
 * Withdraws the pending invitations `inviterUserId` sent for roles their new role (`null`: removed) can no longer
 * give, each recorded as `invitation.revoked` with `reason`, in the enclosing transaction.
 * @returns how many were withdrawn.
 */
export async function withdrawInvitations(
  orgId: string,
  inviterUserId: string,
  newRole: string | null,
  actor: AuditActor,
  reason: string,
): Promise<number> {
  const keep = newRole ? [...grantableRoles(newRole)] : [];
  const stale = await prisma().invitation.findMany({
    where: { orgId, inviterId: inviterUserId, status: "pending", role: { notIn: keep } },
    select: { id: true, email: true, role: true },
  });
  if (stale.length === 0) return 0;
  await prisma().invitation.updateMany({
    where: { id: { in: stale.map((invitation) => invitation.id) } },
    data: { status: "canceled" },
  });
  for (const invitation of stale) {
    await recordSettingsAudit(orgId, actor, {
      action: "invitation.revoked",
      target: invitation.email,
      details: { role: invitation.role, reason },
    });
  }
  return stale.length;
}
