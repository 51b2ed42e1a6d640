import { z } from "zod";
import { orgProcedure, router } from "../../settings/trpc";
import { actorOf, type SignedInMember } from "../session";
import { ssoPolicyOf } from "../sso/policy";
import { listDirectoryEvents } from "./events";
import {
  createDirectoryToken,
  directoryStatus,
  revokeDirectoryToken,
  rotateDirectoryToken,
  serviceKeys,
  type TokenChangeBy,
} from "./tokens";

function changeBy(member: SignedInMember): TokenChangeBy {
  return { orgId: member.org.id, userId: member.user.id, origin: member.request.origin, actor: actorOf(member) };
}

/** A SCIM token's id as the directory page names it: the plugin's credential id (docs/api-contract.md §11.5). */
export const TokenIdSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(255)
    .regex(/^ba_scim_credential_[A-Za-z0-9_-]+$/, "Not a SCIM token id")
    .describe("A SCIM token's id (ba_scim_credential_…)"),
});

/**
 * Provisioning of the member's organisation (docs/api-contract.md §11.5; the directory page,
 * `/settings/security/directory`): the SCIM base URL, the bearer tokens (shown once, rotatable, revocable), the
 * service keys a deprovisioning keeps, and the directory events. Owners and admins only (`organization:update` to
 * change tokens, `audit:read` to see them): any other role is refused with 403 and an `action.refused` audit entry.
 * Creating and rotating a token need a sign-in or confirmation within 15 minutes (step-up), as a key does. Every
 * change is in the settings audit trail and the directory events.
 */
export const directoryRouter = router({
  /**
   * The directory page's data: `{ baseUrl, connectionId, tokens: [{ id, status, createdAt, createdBy, expiresAt,
   * lastUsedAt, revokedAt }], lastRequestAt, serviceKeys: [{ id, name, prefix, isTest, createdBy }], roles:
   * { defaultRole, rules: [{ group, role }] } }` (the group map, in order, as single sign-on's policy holds it).
   * @throws 403 for roles other than owner and admin.
   */
  overview: orgProcedure("audit:read").query(async ({ ctx }) => ({
    ...(await directoryStatus(ctx.member.org.id, ctx.member.request.origin)),
    serviceKeys: await serviceKeys(ctx.member.org.id),
    roles: await ssoPolicyOf(ctx.member.org.id).then(({ defaultRole, groupRoles }) => ({
      defaultRole,
      rules: groupRoles,
    })),
  })),

  /**
   * The latest directory events, newest first: `[{ id, createdAt, action, target, outcome ('ok' | 'error'),
   * details }]`. @throws 403 for roles other than owner and admin.
   */
  events: orgProcedure("audit:read")
    .input(z.object({ limit: z.number().int().min(1).max(200).default(50) }).default({ limit: 50 }))
    .query(({ ctx, input }) => listDirectoryEvents(ctx.member.org.id, input.limit)),

  /**
   * Makes the organisation's SCIM token (the first one also its connection): `{ token, view, baseUrl }`, `token`
   * shown once. @throws 403 for roles other than owner and admin, without the organisation's required second factor,
   * or without a recent sign-in; 409 `conflict` when a token still works (rotate or revoke it).
   */
  createToken: orgProcedure("organization:update", { stepUp: true }).mutation(async ({ ctx }) => ({
    ...(await createDirectoryToken(changeBy(ctx.member))),
    baseUrl: (await directoryStatus(ctx.member.org.id, ctx.member.request.origin)).baseUrl,
  })),

  /**
   * Rotates the SCIM token: `{ token, view, previous: { id, expiresAt } }`, the new token shown once, the previous
   * one working for 24 hours more. @throws 403 as {@link directoryRouter.createToken}; 404 `not_found` when no token
   * works.
   */
  rotateToken: orgProcedure("organization:update", { stepUp: true }).mutation(({ ctx }) =>
    rotateDirectoryToken(changeBy(ctx.member)),
  ),

  /**
   * Revokes a SCIM token at once (`{ id, revoked: true }`): the directory's next request with it gets 401; nobody is
   * deprovisioned. @throws 403 for roles other than owner and admin (or without the organisation's required second
   * factor); 404 `not_found` when it is not a working token of the organisation; 422 for a malformed id.
   */
  revokeToken: orgProcedure("organization:update")
    .input(TokenIdSchema)
    .mutation(async ({ ctx, input }) => {
      await revokeDirectoryToken(changeBy(ctx.member), input.id);
      return { id: input.id, revoked: true as const };
    }),
});
