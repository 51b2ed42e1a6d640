// Revoking a pending invitation (docs/api-contract.md §5.10): its link stops working.
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordSettingsAudit } from "../audit-trail/service";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { actorOf, type SignedInMember } from "../session";

/**
 * Revokes the pending invitation of `email` through better-auth and records it, in one transaction.
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
