// Provisioning (SCIM 2.0) through @better-auth/scim 1.7.5 (docs/api-contract.md §11.5): the plugin's configuration,
// installed by server/identity/better-auth.ts on every origin's instance (`...directoryPlugins()`). One managed
// connection per organisation (`provisioningDomainId` is the organisation's id), its bearer tokens made and ended by
// the directory page (./tokens.ts); Users and Groups as the plugin serves them under `<origin>/api/auth/scim/v2`;
// our identity resolution and membership projection (./projection.ts).
import { hash } from "node:crypto";
import { scim } from "@better-auth/scim";
import type { BetterAuthPlugin } from "better-auth";
import { APIError } from "better-auth/api";
import { prisma } from "../../db/transaction";
import { ASSIGNABLE_ROLES } from "../roles";
import { authSecret } from "../secret";
import { ssoPolicyOf } from "../sso/policy";
import { directoryProjection } from "./projection-hooks";

/**
 * Where the plugin's SCIM endpoints are, under better-auth's base path: `<origin>/api/auth/scim/v2`.
 * Source: docs/api-contract.md §11.5.
 */
export const SCIM_PATH = "/scim/v2";

/**
 * Tokens of one connection that work at once: one (a rotation replaces it, docs/single-sign-on.md §7).
 * Source: docs/api-contract.md §11.5.
 */
export const MAX_ACTIVE_TOKENS = 1;

/**
 * A token's `lastUsedAt` (the page's "last request") is written at most once a minute (60 s).
 * Source: docs/api-contract.md §11.5.
 */
export const LAST_USED_INTERVAL_SECONDS = 60;

/**
 * SCIM requests per client address and path a minute (60 s window) before 429: a directory's sync is bursty.
 * Source: docs/api-contract.md §11.5.
 */
export const SCIM_REQUESTS_PER_MINUTE = 600;

/**
 * The secret the plugin digests bearer tokens with (HMAC-SHA-256): derived from the auth secret, so it is independent
 * of the cookies' key yet needs no setting of its own. Changing `BETTER_AUTH_SECRET` ends every SCIM token.
 */
function credentialHashSecret(): string {
  return hash("sha256", `scim-credential-digest:${authSecret()}`, "hex");
}

/**
 * Refuses a directory's change of a user's email when the user belongs to another organisation too (a membership, a
 * pending invitation, a removal record): the directory that created a user manages its name and email, and changing
 * the email of someone another organisation trusts would let this one's directory take their account over (a password
 * reset to the new address). A user of this organisation alone may be renamed freely.
 * @throws APIError `CONFLICT` (409, a SCIM error; the request changes nothing).
 */
async function guardEmailChange(data: { email?: unknown }, context: unknown): Promise<void> {
  const endpoint = context as { path?: string; params?: { userId?: string } } | null;
  if (
    typeof data.email !== "string" ||
    !endpoint?.path?.startsWith(`${SCIM_PATH}/Users/`) ||
    !endpoint.params?.userId
  ) {
    return;
  }
  const source = await prisma().scimUser.findUnique({
    where: { id: endpoint.params.userId },
    select: { provisioningDomainId: true, user: { select: { id: true, email: true } } },
  });
  if (!source || source.user.email === data.email.toLowerCase()) return;
  const orgId = source.provisioningDomainId;
  const email = source.user.email;
  const [members, invitations, removals] = await Promise.all([
    prisma().member.count({ where: { userId: source.user.id, orgId: { not: orgId } } }),
    prisma().invitation.count({ where: { email, status: "pending", orgId: { not: orgId } } }),
    prisma().memberRemoval.count({ where: { email, orgId: { not: orgId } } }),
  ]);
  if (members + invitations + removals === 0) return;
  throw new APIError("CONFLICT", {
    message: `${email} also belongs to another organisation: the directory cannot change their email address`,
  });
}

/**
 * The plugins of provisioning: `scim` with
 * - `connections: []` and `managedConnections` (tokens digested with {@link credentialHashSecret}, at most
 *   {@link MAX_ACTIVE_TOKENS} working at once, last use written at most every {@link LAST_USED_INTERVAL_SECONDS} s);
 * - `identity.resolveUser`: `resolveDirectoryUser` of ./projection.ts (never links an account outside the
 *   organisation), bound late through ./projection-hooks.ts;
 * - `projection.roles`: a SCIM Group gives the role of the first rule of the organisation's ordered map naming it
 *   (`SsoPolicy.groupRoles`, the map single sign-on applies: its display name or its `externalId`, compared
 *   exactly), a role being one of admin, developer, viewer (never owner);
 * - `projection.reconcileUser`: `reconcileMembership` of ./projection.ts (membership, role, deprovisioning,
 *   reactivation), bound the same way;
 * - `compatibility.microsoftEntra.acceptLegacyGroupSchema`: Entra's classic Group schema marker on `POST /Groups`;
 * a rate limit of {@link SCIM_REQUESTS_PER_MINUTE} per address and path on the SCIM paths, in place of better-auth's
 * 60; and a `user.update.before` database hook ({@link guardEmailChange}) that keeps a directory from changing the
 * email of someone another organisation has.
 * Source: docs/api-contract.md §11.5.
 */
export function directoryPlugins() {
  const rateLimit = {
    id: "directory-rate-limit",
    rateLimit: [
      {
        pathMatcher: (path: string) => path.startsWith(`${SCIM_PATH}/`),
        window: 60,
        max: SCIM_REQUESTS_PER_MINUTE,
      },
    ],
  } satisfies BetterAuthPlugin;
  const profileGuard = {
    id: "directory-profile-guard",
    init: () => ({
      options: { databaseHooks: { user: { update: { before: (data, context) => guardEmailChange(data, context) } } } },
    }),
  } satisfies BetterAuthPlugin;
  return [
    rateLimit,
    profileGuard,
    scim({
      connections: [],
      managedConnections: {
        credentialHashSecret: credentialHashSecret(),
        maxActiveCredentials: MAX_ACTIVE_TOKENS,
        lastUsedWriteIntervalSeconds: LAST_USED_INTERVAL_SECONDS,
      },
      identity: { resolveUser: (input) => directoryProjection().resolveUser(input) },
      projection: {
        roles: {
          map: async ({ provisioningDomainId, source }) => {
            const { groupRoles } = await ssoPolicyOf(provisioningDomainId);
            const rule = groupRoles.find(
              (item) => item.group === source.displayName || item.group === source.externalId,
            );
            return rule ? [rule.role] : undefined;
          },
          exists: ({ role }) => (ASSIGNABLE_ROLES as readonly string[]).includes(role),
        },
        reconcileUser: (state) => directoryProjection().reconcileUser(state),
      },
      compatibility: { microsoftEntra: { acceptLegacyGroupSchema: true } },
    }),
  ] as const;
}
