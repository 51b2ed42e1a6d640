// Removing a member (docs/api-contract.md §5.10, §11.4): their sessions of the organisation end; the last owner stays;
// what else goes with them is endMembership's.
import { actorOf, type SignedInMember } from "../session";
import { endMembership } from "./end-membership";
import { getMember } from "./list-team";
import { refuse, requirePermission, underTeamLock } from "./team-lock";

/**
 * Removes a member under the team lock through {@link endMembership} (the service the directory's deprovisioning runs
 * too): in one transaction the membership ends with a removal kept (their next SSO sign-in does not add them again,
 * docs/api-contract.md §11.4), their sessions of the organisation end, their pending invitations are withdrawn, their
 * OAuth connections revoked (docs/api-contract.md §10.6) and (`revokeKeys`) the keys they created revoked except
 * organisation service keys, each recorded, with a `member.removed` event. Without `revokeKeys` their keys keep
 * working.
 * @returns how many keys were revoked.
 * @throws ApiError `not_found` (404) for an unknown member; `insufficient_scope` (403) when the actor may not (an
 *         admin removing an owner too); `validation_error` (422) for the last owner.
 */
export async function removeMember(
  member: SignedInMember,
  memberId: string,
  options: { revokeKeys?: boolean } = {},
): Promise<{ revokedKeys: number }> {
  return underTeamLock(member, "team.removeMember", `member ${memberId}`, async (now) => {
    requirePermission(member, now.role, "member:delete");
    const target = await getMember(member.org.id, memberId);
    if (target.role === "owner" && now.role !== "owner") refuse("Only an owner can remove an owner");
    const ended = await endMembership({
      orgId: member.org.id,
      userId: target.userId,
      source: "manual",
      actor: actorOf(member),
      revokeKeys: options.revokeKeys === true,
    });
    return { revokedKeys: ended?.revokedKeys ?? 0 };
  });
}
