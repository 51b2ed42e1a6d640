// Inviting someone to the team (docs/api-contract.md §5.10): better-auth's invitation (a pending one for the same
// email is replaced), the link shown once and mailed by better-auth's `sendInvitationEmail` once committed.

import { prisma } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordSettingsAudit, type SettingsActor } from "../audit-trail/service";
import { authFor, invitationLink, type MailOutcome, withInvitationMail } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { normaliseEmail } from "../passwords";
import { ASSIGNABLE_ROLES, type AssignableRole, grantableRoles, refusalMessage } from "../roles";
import { actorOf, type SignedInMember } from "../session";
import { refuse, underTeamLock } from "./team-lock";

/** A new invitation: its link (shown once), its expiry, and whether it was also mailed. */
export interface CreatedInvitation {
  email: string;
  role: AssignableRole;
  link: string;
  expiresAt: Date;
  mailed: MailOutcome;
}

/**
 * The role as one an invitation or a role change may give.
 * @throws ApiError `validation_error` (422) on `role` for owner or an unknown role.
 */
export function assignable(role: string): AssignableRole {
  if ((ASSIGNABLE_ROLES as readonly string[]).includes(role)) return role as AssignableRole;
  const message = `Role must be one of ${ASSIGNABLE_ROLES.join(", ")} (ownership is transferred, not given)`;
  throw new ApiError("validation_error", message, { details: [{ path: ["role"], message }] });
}

/**
 * Invites `email` to the organisation with a role other than owner, under the team lock (the inviter's role is read
 * again there, so someone demoted a moment before invites nobody), and records it in the same transaction.
 * @returns the link to show once, with its expiry (7 days) and how its mail went.
 * @throws ApiError `validation_error` (422) for a malformed email, an owner role, or someone already a member;
 *         `insufficient_scope` (403) when the inviter can no longer give the role.
 */
export async function inviteMember(
  member: SignedInMember,
  input: { email: string; role: string },
  actor: SettingsActor = actorOf(member),
): Promise<CreatedInvitation> {
  const email = normaliseEmail(input.email);
  const role = assignable(input.role);
  const { request, org } = member;
  const { result: invitation, mailed } = await withInvitationMail(() =>
    underTeamLock(member, "team.invite", email, async (now) => {
      if (!grantableRoles(now.role).includes(role)) refuse(refusalMessage(now.role, "invitation:create", org.name));
      const created = await viaAuth(() =>
        authFor(request.origin).api.createInvitation({
          headers: request.headers,
          body: { email, role, organizationId: org.id },
        }),
      );
      await recordSettingsAudit(org.id, actor, { action: "invitation.created", target: email, details: { role } });
      return created;
    }),
  );
  const link = invitationLink(request.origin, invitation.id);
  return { email, role, link, expiresAt: new Date(invitation.expiresAt), mailed };
}

/**
 * Sends a pending invitation again as a new link (the old link stops working), with a new 7 days.
 * @throws ApiError `not_found` (404) when there is no pending invitation for the email; as {@link inviteMember}.
 */
export async function resendInvitation(member: SignedInMember, email: string): Promise<CreatedInvitation> {
  const pending = await prisma().invitation.findFirst({
    where: { orgId: member.org.id, email: email.trim().toLowerCase(), status: "pending" },
    select: { role: true },
  });
  if (!pending) throw new ApiError("not_found", "No pending invitation for this email");
  return inviteMember(member, { email, role: pending.role });
}
