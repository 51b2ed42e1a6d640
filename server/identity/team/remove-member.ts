// Removing a member (docs/api-contract.md §5.10): their next request is refused; the last owner stays; their pending
// invitations are withdrawn, their OAuth connections revoked and, when asked, the keys they created revoked with it.
import { revokeKeysCreatedBy } from "../../platform/api-keys/service";
import { recordSettingsAudit } from "../audit-trail/service";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { revokeConnectionsCreatedBy } from "../oauth/connections";
import { actorOf, type SignedInMember } from "../session";
import { getMember } from "./list-team";
import { refuse, requirePermission, underTeamLock, withdrawInvitations } from "./team-lock";

/**
 * Removes a member under the team lock, in one transaction with its audit entry, the withdrawal of their pending
 * invitations, the revocation of their OAuth connections (docs/api-contract.md §10.6) and (`revokeKeys`) of the keys
 * they created, each recorded. Keys belong to the organisation: without `revokeKeys` they keep working.
 * @returns how many keys were revoked.
 * @throws ApiError `not_found` (404) for an unknown member; `insufficient_scope` (403) when the actor may not (an
 *         admin removing an owner too); `validation_error` (422) for the last owner.
 */
export async function removeMember(
  member: SignedInMember,
  memberId: string,
  options: { revokeKeys?: boolean } = {},
): Promise<{ revokedKeys: number }> {
  const actor = actorOf(member);
  return underTeamLock(member, "team.removeMember", `member ${memberId}`, async (now) => {
    requirePermission(member, now.role, "member:delete");
    const target = await getMember(member.org.id, memberId);
    if (target.role === "owner" && now.role !== "owner") refuse("Only an owner can remove an owner");
    await viaAuth(() =>
      authFor(member.request.origin).api.removeMember({
        headers: member.request.headers,
        body: { memberIdOrEmail: memberId, organizationId: member.org.id },
      }),
    );
    await recordSettingsAudit(member.org.id, actor, {
      action: "member.removed",
      target: target.email,
      details: { role: target.role },
    });
    const reason = `${target.email} was removed`;
    await withdrawInvitations(member.org.id, target.userId, null, actor, reason);
    // Their OAuth connections go with them whatever `revokeKeys` says: each is their own authorization of a client.
    await revokeConnectionsCreatedBy(member.org.id, target.userId, actor);
    const revoked = options.revokeKeys ? await revokeKeysCreatedBy(member.org.id, target.userId, actor, reason) : [];
    return { revokedKeys: revoked.length };
  });
}
