// Transferring ownership (docs/api-contract.md §5.10): another member becomes an owner and the acting owner an
// admin. Under the team lock, so two transfers at once leave exactly one new owner.
import { ApiError } from "../../errors";
import { recordSettingsAudit } from "../audit-trail/service";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { actorOf, type SignedInMember } from "../session";
import { getMember } from "./list-team";
import { requirePermission, underTeamLock } from "./team-lock";
import { withdrawInvitations } from "./withdraw-invitations";

/**
 * Makes another member an owner and the acting owner an admin, in one transaction under the team lock; the actor's
 * ownership is checked again there, so of two transfers at once the second is refused.
 * @throws ApiError `not_found` (404) for an unknown member; `validation_error` (422) when the target is the actor or
 *         already an owner; `insufficient_scope` (403) when the actor is no longer an owner.
 */
export async function transferOwnership(member: SignedInMember, memberId: string): Promise<void> {
  const actor = actorOf(member);
  const { api } = authFor(member.request.origin);
  const body = { organizationId: member.org.id };
  await underTeamLock(member, "team.transferOwnership", `member ${memberId}`, async (now) => {
    requirePermission(member, now.role, "organization:transfer");
    const target = await getMember(member.org.id, memberId);
    if (target.userId === member.user.id || target.role === "owner") {
      const message = "Choose a member who is not an owner";
      throw new ApiError("validation_error", message, { details: [{ path: ["memberId"], message }] });
    }
    await viaAuth(() =>
      api.updateMemberRole({ headers: member.request.headers, body: { ...body, memberId, role: "owner" } }),
    );
    await viaAuth(() =>
      api.updateMemberRole({
        headers: member.request.headers,
        body: { ...body, memberId: member.memberId, role: "admin" },
      }),
    );
    await recordSettingsAudit(member.org.id, actor, {
      action: "organisation.ownershipTransferred",
      target: target.email,
      details: { from: member.user.email, to: target.email },
    });
    // An admin gives every role an owner gives today; kept so the rule holds if that changes.
    await withdrawInvitations(member.org.id, member.user.id, "admin", actor, `${member.user.email} became admin`);
  });
}
