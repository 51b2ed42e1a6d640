import { z } from "zod";
import { authorize, memberProcedure, orgProcedure, router } from "../../settings/trpc";
import { changeRole, OWNER_RULE } from "./change-role";
import { inviteMember, resendInvitation } from "./invite-member";
import { getMember, listInvitations, listMembers } from "./list-team";
import { deleteOrganisation, setRequireTwoFactor } from "./organisation-settings";
import { removeMember } from "./remove-member";
import { revokeInvitation } from "./revoke-invitation";
import { transferOwnership } from "./transfer-ownership";

const EmailSchema = z.object({ email: z.string().trim().min(1, "Email is required").max(320) });
const MemberIdSchema = z.object({ memberId: z.string().min(1).max(64).describe("Member id") });

/**
 * The member's organisation's team (docs/architecture.md, "Settings: sign-in, team and roles"): everyone sees the
 * members; owners and admins invite (the link is returned once), revoke and resend invitations, change roles (never
 * to or from owner, after a recent sign-in) and remove members (an admin never an owner), optionally revoking the
 * keys the member created; owners alone transfer ownership and delete the organisation. Invitations, role changes,
 * removals and transfers of one organisation take turns (server/identity/team/team-lock.ts). An organisation always
 * keeps at least one owner. Every change is in the audit trail.
 */
export const teamRouter = router({
  /** The members with their roles and the keys each created that still work, owners first. */
  members: memberProcedure.query(({ ctx }) => listMembers(ctx.member.org.id)),

  /** Pending invitations (email, role, expiry; never the link). @throws 403 for developers and viewers. */
  invitations: orgProcedure("invitation:create").query(({ ctx }) => listInvitations(ctx.member.org.id)),

  /**
   * Invites an email with a role other than owner. @returns `{ email, role, link, expiresAt, mailed }`; the link is
   * shown once. @throws 403; 422 for a malformed email, an owner role or an existing member.
   */
  invite: orgProcedure("invitation:create")
    .input(EmailSchema.extend({ role: z.string().max(20) }))
    .mutation(({ ctx, input }) => inviteMember(ctx.member, input)),

  /** A new link for a pending invitation (the old one stops working). @throws 403; 404 when none is pending. */
  resendInvitation: orgProcedure("invitation:create")
    .input(EmailSchema)
    .mutation(({ ctx, input }) => resendInvitation(ctx.member, input.email)),

  /** Revokes the pending invitation of an email. @throws 403; 404 when none is pending. */
  revokeInvitation: orgProcedure("invitation:cancel")
    .input(EmailSchema)
    .mutation(async ({ ctx, input }) => {
      await revokeInvitation(ctx.member, input.email);
      return { email: input.email, revoked: true as const };
    }),

  /**
   * Gives a member another role (admin, developer or viewer), after a recent sign-in; takes effect on their next
   * request, and their pending invitations for roles they can no longer give are withdrawn. @throws 403 (also for an
   * owner's role); 404 for an unknown member; 422 for an owner or unknown role.
   */
  changeRole: memberProcedure
    .input(MemberIdSchema.extend({ role: z.string().max(20) }))
    .mutation(async ({ ctx, input, path }) => {
      const target = await getMember(ctx.member.org.id, input.memberId);
      await authorize(ctx.member, "member:update", {
        attempted: path,
        target: `member ${target.email}`,
        stepUp: true,
        allowed: target.role !== "owner" && input.role !== "owner",
        reason: OWNER_RULE,
      });
      return changeRole(ctx.member, input.memberId, input.role);
    }),

  /**
   * Removes a member; their next request is refused, their pending invitations are withdrawn and their OAuth
   * connections revoked. `revokeKeys` also revokes the keys they created (listed by `members`).
   * @returns `{ memberId, removed, revokedKeys }`.
   * @throws 403 (an admin removing an owner too); 404; 422 for the last owner.
   */
  removeMember: memberProcedure
    .input(MemberIdSchema.extend({ revokeKeys: z.boolean().optional() }))
    .mutation(async ({ ctx, input, path }) => {
      const target = await getMember(ctx.member.org.id, input.memberId);
      await authorize(ctx.member, "member:delete", {
        attempted: path,
        target: `member ${target.email}`,
        allowed: target.role !== "owner" || ctx.member.role === "owner",
        reason: "Only an owner can remove an owner",
      });
      const { revokedKeys } = await removeMember(ctx.member, input.memberId, { revokeKeys: input.revokeKeys });
      return { memberId: input.memberId, removed: true as const, revokedKeys };
    }),

  /** Makes another member an owner and the acting owner an admin (step-up). @throws 403; 404; 422. */
  transferOwnership: orgProcedure("organization:transfer", { stepUp: true })
    .input(MemberIdSchema)
    .mutation(async ({ ctx, input }) => {
      await transferOwnership(ctx.member, input.memberId);
      return { memberId: input.memberId, transferred: true as const };
    }),

  /** Deletes the organisation once its slug is typed (step-up). @throws 403; 422 when `confirm` is not the slug. */
  deleteOrganisation: orgProcedure("organization:delete", { stepUp: true })
    .input(z.object({ confirm: z.string().max(100) }))
    .mutation(async ({ ctx, input }) => {
      await deleteOrganisation(ctx.member, input.confirm);
      return { deleted: true as const };
    }),

  /**
   * Turns "require two-factor for owners and admins" on, or off after a step-up with the member's strongest factor
   * (docs/api-contract.md §5.10). @throws 403 for developers and viewers, and for turning it off without that step-up.
   */
  setRequireTwoFactor: memberProcedure
    .input(z.object({ required: z.boolean() }))
    .mutation(async ({ ctx, input, path }) => {
      await authorize(ctx.member, "organization:update", {
        attempted: path,
        stepUp: input.required ? false : "strongest",
      });
      await setRequireTwoFactor(ctx.member, input.required);
      return { requireTwoFactor: input.required };
    }),
});
