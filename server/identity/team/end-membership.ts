// Ending a membership (docs/api-contract.md §5.10, §11.4, §11.5): the one service a removal by hand, the operator
// command and the directory's deprovisioning run, so a person who leaves loses the same things whichever way they go.
import type { z } from "zod";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { revokeKeysCreatedBy } from "../../platform/api-keys/service";
import type { MemberRemovedSchema } from "../../platform/events-feed/schema";
import { recordEvents } from "../../records/events";
import { type AuditActor, recordSettingsAudit } from "../audit-trail/service";
import { revokeConnectionsCreatedBy } from "../oauth/connections";
import { withdrawInvitations } from "./withdraw-invitations";

/** What ended a membership: `manual` (the team page or the operator command) or `directory` (SCIM deprovisioning). */
export type RemovalSource = "manual" | "directory";

/** What {@link endMembership} did besides ending the membership. */
export interface EndedMembership {
  /** The membership's id and the role it had. */
  memberId: string;
  role: string;
  email: string;
  /** Keys the person created that were revoked (their organisation service keys are kept). */
  revokedKeys: number;
  /** Sessions ended. */
  endedSessions: number;
}

/**
 * Ends `userId`'s membership of `orgId` in one transaction (the caller's, or its own): the membership row goes; a
 * removal (tombstone, `MemberRemoval`) is kept so their next SSO sign-in does not add them again; their pending
 * invitations are withdrawn and their OAuth connections revoked; with `revokeKeys`, the keys they created are revoked,
 * except organisation service keys; their sessions of this organisation end (every session, when they are a member of
 * no other organisation); a `member.removed` audit entry and a `member.removed` event (actor: the acting member, or
 * the system for the directory) are recorded.
 * Callers check who may do it; this refuses only what no caller may do.
 * @returns what was ended, or null when the person was not a member.
 * @throws ApiError `validation_error` (422) when they are the organisation's last owner.
 */
export async function endMembership(input: {
  orgId: string;
  userId: string;
  source: RemovalSource;
  actor: AuditActor;
  revokeKeys: boolean;
}): Promise<EndedMembership | null> {
  const { orgId, userId, source, actor } = input;
  return transaction(async () => {
    const member = await prisma().member.findUnique({
      where: { orgId_userId: { orgId, userId } },
      select: { id: true, role: true, user: { select: { email: true } } },
    });
    if (!member) return null;
    if (member.role === "owner") {
      const owners = await prisma().member.count({ where: { orgId, role: "owner" } });
      if (owners <= 1) {
        throw new ApiError("validation_error", "An organisation always keeps at least one owner");
      }
    }
    const email = member.user.email;
    await prisma().member.delete({ where: { id: member.id } });
    const removedBy = "userId" in actor ? actor.email : null;
    await prisma().memberRemoval.upsert({
      where: { orgId_email: { orgId, email } },
      create: { orgId, userId, email, source, role: member.role, removedBy },
      update: { userId, source, role: member.role, removedBy, removedAt: new Date() },
    });
    const reason = source === "directory" ? `${email} was deprovisioned by the directory` : `${email} was removed`;
    await recordSettingsAudit(orgId, actor, {
      action: "member.removed",
      target: email,
      details: { role: member.role, source },
    });
    await withdrawInvitations(orgId, userId, null, actor, reason);
    await revokeConnectionsCreatedBy(orgId, userId, actor);
    const revoked = input.revokeKeys ? await revokeKeysCreatedBy(orgId, userId, actor, reason) : [];
    const otherMemberships = await prisma().member.count({ where: { userId } });
    const ended = await prisma().session.deleteMany({
      where: otherMemberships === 0 ? { userId } : { userId, activeOrgId: orgId },
    });
    const data: z.infer<typeof MemberRemovedSchema> = {
      id: member.id,
      resource: "member",
      deleted: true,
      email,
      role: member.role,
      source,
    };
    const origin = "userId" in actor && actor.userId ? { isTest: false, userId: actor.userId } : { isTest: false };
    await recordEvents(prisma(), orgId, origin, [{ name: "member.removed", data }]);
    return { memberId: member.id, role: member.role, email, revokedKeys: revoked.length, endedSessions: ended.count };
  });
}
