// What the directory's state means for an organisation's team (docs/api-contract.md §11.5): the SCIM plugin's
// `identity.resolveUser` (who a new SCIM User is) and `projection.reconcileUser` (an active SCIM User is a member with
// the mapped role; an inactive or deleted one is not), run by the plugin inside each SCIM request's transaction.

import { generateId } from "better-auth";
import { APIError } from "better-auth/api";
import { prisma } from "../../db/transaction";
import { recordSettingsAudit } from "../audit-trail/service";
import { mappedRole, ssoPolicyOf } from "../sso/policy";
import { endMembership } from "../team/end-membership";
import { withdrawInvitations } from "../team/withdraw-invitations";
import { currentDirectoryRequest, directoryActor } from "./context";
import { recordDirectoryEvent } from "./events";
import { type DirectoryIdentity, type ProjectedMembership, registerDirectoryProjection } from "./projection-hooks";

function noteOrganisation(orgId: string): void {
  const request = currentDirectoryRequest();
  if (request) request.orgId = orgId;
}

function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).toLowerCase();
}

/**
 * Who an incoming SCIM User (`POST /Users`) is. No user with the email: a new one (`create`; the plugin makes a user
 * without a password, whose profile the directory manages). A user with the email who is tied to this organisation (a
 * member, a removed member, a pending invitation, or an email of one of its verified domains): that user, their name
 * and email left as they are (`link`, `preserve`), so a directory never rewrites, and thereby takes over, an account.
 * @throws APIError `CONFLICT` (409, a SCIM error) for a user with the email who is not tied to the organisation:
 *         a directory may not add someone else's account to its organisation.
 * Source: docs/api-contract.md §11.5.
 */
export async function resolveDirectoryUser(input: {
  provisioningDomainId: string;
  resource: { primaryEmail: string };
}): Promise<DirectoryIdentity> {
  const orgId = input.provisioningDomainId;
  noteOrganisation(orgId);
  const email = input.resource.primaryEmail.toLowerCase();
  const user = await prisma().user.findUnique({ where: { email }, select: { id: true } });
  if (!user) return { action: "create" };
  const [member, removal, invitation, domain] = await Promise.all([
    prisma().member.findUnique({ where: { orgId_userId: { orgId, userId: user.id } }, select: { id: true } }),
    prisma().memberRemoval.findUnique({ where: { orgId_email: { orgId, email } }, select: { id: true } }),
    prisma().invitation.findFirst({ where: { orgId, email, status: "pending" }, select: { id: true } }),
    prisma().ssoDomain.findFirst({
      where: { orgId, domain: emailDomain(email), verifiedAt: { not: null } },
      select: { id: true },
    }),
  ]);
  if (member || removal || invitation || domain) return { action: "link", userId: user.id, profile: "preserve" };
  throw new APIError("CONFLICT", {
    message: `${email} already has an account that is not tied to this organisation: invite them first, or verify the email's domain for single sign-on`,
  });
}

/**
 * Makes the organisation's team match the directory for one person, in the SCIM request's transaction:
 * - active and a member: the role follows the group map (never an owner's: owners change by transfer); an
 *   organisation without a map keeps its members' roles;
 * - active and not a member: joins with the mapped role (reactivation: the directory's removal is lifted); not when
 *   a member removed them by hand (`MemberRemoval.source = manual`): that stands until they are invited again;
 * - inactive (`active: false`, or the SCIM User deleted): their membership ends through {@link endMembership} with
 *   source `directory` (tombstone, sessions, keys they created except service keys, invitations, connections, audit
 *   entry, event), recorded as `member.deprovisioned`.
 * Each change writes a settings audit entry (actor `Directory (SCIM)`) and a directory event.
 * @throws APIError `CONFLICT` (409, a SCIM error; the request changes nothing) when deactivating the organisation's
 *         last owner; recorded as a `member.deprovisioned` event with outcome `error` once the request is answered.
 * Source: docs/api-contract.md §11.5.
 */
export async function reconcileMembership(state: ProjectedMembership): Promise<void> {
  const orgId = state.provisioningDomainId;
  noteOrganisation(orgId);
  const user = await prisma().user.findUnique({ where: { id: state.userId }, select: { email: true } });
  if (!user) return;
  const email = user.email;
  const member = await prisma().member.findUnique({
    where: { orgId_userId: { orgId, userId: state.userId } },
    select: { id: true, role: true },
  });
  const actor = directoryActor();
  if (!state.active) {
    if (!member) return;
    if (member.role === "owner" && (await prisma().member.count({ where: { orgId, role: "owner" } })) <= 1) {
      const message = `${email} is the organisation's last owner: make someone else owner before the directory deactivates them`;
      currentDirectoryRequest()?.refusals.push({
        orgId,
        action: "member.deprovisioned",
        target: email,
        details: { reason: message },
      });
      throw new APIError("CONFLICT", { message });
    }
    const ended = await endMembership({ orgId, userId: state.userId, source: "directory", actor, revokeKeys: true });
    await recordDirectoryEvent(orgId, {
      action: "member.deprovisioned",
      target: email,
      details: { role: member.role, revokedKeys: ended?.revokedKeys ?? 0, endedSessions: ended?.endedSessions ?? 0 },
    });
    return;
  }
  // A SCIM Group is named by a rule through its display name or its directory id (Entra's object id), exactly.
  const groups = state.grants.flatMap((grant) =>
    grant.source.externalId ? [grant.source.displayName, grant.source.externalId] : [grant.source.displayName],
  );
  const policy = await ssoPolicyOf(orgId);
  const role = mappedRole(policy, groups);
  const groupNames = [...new Set(state.grants.map((grant) => grant.source.displayName))].join(", ") || null;
  if (member) {
    // Without a group map the directory does not manage roles: members keep theirs, newcomers get the default.
    if (member.role === role || member.role === "owner" || policy.groupRoles.length === 0) return;
    await prisma().member.update({ where: { id: member.id }, data: { role } });
    await recordSettingsAudit(orgId, actor, {
      action: "member.roleChanged",
      target: email,
      details: { from: member.role, to: role, source: "directory" },
    });
    await withdrawInvitations(orgId, state.userId, role, actor, `${email} became ${role}`);
    await recordDirectoryEvent(orgId, {
      action: "member.role_changed",
      target: email,
      details: { from: member.role, to: role, groups: groupNames },
    });
    return;
  }
  const removal = await prisma().memberRemoval.findUnique({
    where: { orgId_email: { orgId, email } },
    select: { id: true, source: true, removedAt: true, removedBy: true },
  });
  if (removal?.source === "manual") {
    await recordDirectoryEvent(orgId, {
      action: "member.kept",
      target: email,
      outcome: "error",
      details: {
        reason: `removed by hand${removal.removedBy ? ` by ${removal.removedBy}` : ""} on ${removal.removedAt.toISOString()}: invite them again to let the directory manage them`,
      },
    });
    return;
  }
  await prisma().member.create({ data: { id: generateId(), orgId, userId: state.userId, role } });
  if (removal) await prisma().memberRemoval.delete({ where: { id: removal.id } });
  await recordSettingsAudit(orgId, actor, {
    action: removal ? "member.reactivated" : "member.provisioned",
    target: email,
    details: { role },
  });
  await recordDirectoryEvent(orgId, {
    action: removal ? "member.reactivated" : "member.joined",
    target: email,
    details: { role, groups: groupNames },
  });
}

registerDirectoryProjection({ resolveUser: resolveDirectoryUser, reconcileUser: reconcileMembership });
