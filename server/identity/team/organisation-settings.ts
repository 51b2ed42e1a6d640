// The organisation as a whole (docs/api-contract.md §5.10): its two-factor requirement and its deletion.
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { log } from "../../observability/logger";
import { recordSettingsAudit } from "../audit-trail/service";
import { authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { actorOf, type SignedInMember } from "../session";

/** Turns the organisation's "require two-factor for owners and admins" on or off, with its audit entry. */
export async function setRequireTwoFactor(member: SignedInMember, required: boolean): Promise<void> {
  await transaction(async () => {
    await prisma().organisation.update({ where: { id: member.org.id }, data: { requireTwoFactor: required } });
    await recordSettingsAudit(member.org.id, actorOf(member), {
      action: "organisation.settingsChanged",
      target: "require two-factor for owners and admins",
      details: { requireTwoFactor: required },
    });
  });
}

/**
 * Deletes the organisation with everything it holds (keys, endpoints, records, members, its audit trails), once its
 * slug is typed as confirmation. Logged as one JSON line, since its trail goes with it.
 * @throws ApiError `validation_error` (422) on `confirm` when it is not the slug.
 */
export async function deleteOrganisation(member: SignedInMember, confirm: string): Promise<void> {
  if (confirm.trim() !== member.org.slug) {
    const message = `Type the organisation's slug (${member.org.slug}) to confirm`;
    throw new ApiError("validation_error", message, { details: [{ path: ["confirm"], message }] });
  }
  await viaAuth(() =>
    authFor(member.request.origin).api.deleteOrganization({
      headers: member.request.headers,
      body: { organizationId: member.org.id },
    }),
  );
  log().info(
    { orgId: member.org.id, slug: member.org.slug, by: member.user.email, requestId: member.request.requestId },
    "organisation deleted",
  );
}
