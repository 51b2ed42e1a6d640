// Changing a member's role (docs/api-contract.md §5.10): never to or from owner; counts from the member's next
// request; invitations they sent for roles they can no longer give are withdrawn with it.

import { recordSettingsAudit } from "../audit-trail/service";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { actorOf, type SignedInMember } from "../session";
import { assignable } from "./invite-member";
import { getMember, type MemberView } from "./list-team";
import { refuse, requirePermission, underTeamLock } from "./team-lock";
import { withdrawInvitations } from "./withdraw-invitations";

/** Why an owner's role is not changed here. */
export const OWNER_RULE = "Owners keep their role: an owner transfers ownership to change it";

/**
 * Gives a member another role (never owner, never an owner's: see transfer-ownership.ts), under the team lock, with
 * its audit entry and the withdrawal of the member's invitations the new role cannot give, in one transaction.
 * @throws ApiError `not_found` (404) for an unknown member; `validation_error` (422) for an unassignable role;
 *         `insufficient_scope` (403) when the actor may not (any more) or the target is an owner.
 */
export async function changeRole(member: SignedInMember, memberId: string, role: string): Promise<MemberView> {
  const next = assignable(role);
  const actor = actorOf(member);
  return underTeamLock(member, "team.changeRole", `member ${memberId}`, async (now) => {
    requirePermission(member, now.role, "member:update");
    const target = await getMember(member.org.id, memberId);
    if (target.role === "owner") refuse(OWNER_RULE);
    if (target.role === next) return target;
    await viaAuth(() =>
      authFor(member.request.origin).api.updateMemberRole({
        headers: member.request.headers,
        body: { memberId, role: next, organizationId: member.org.id },
      }),
    );
    await recordSettingsAudit(member.org.id, actor, {
      action: "member.roleChanged",
      target: target.email,
      details: { from: target.role, to: next },
    });
    await withdrawInvitations(member.org.id, target.userId, next, actor, `${target.email} became ${next}`);
    return { ...target, role: next };
  });
}
