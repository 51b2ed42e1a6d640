// What single sign-on allows in an organisation (docs/api-contract.md §11.3): the mode, just-in-time membership, the
// default role and the ordered group → role map, read by the sign-in paths, the SSO sign-in itself and the directory.
import { z } from "zod";
import { prisma } from "../../db/transaction";
import { ASSIGNABLE_ROLES, type AssignableRole } from "../roles";

/** The modes of docs/api-contract.md §11.3: `off`, `optional` (SSO or the other ways) and `required` (SSO only). */
export const SSO_MODES = ["off", "optional", "required"] as const;

/** One of {@link SSO_MODES}. */
export type SsoMode = (typeof SSO_MODES)[number];

/** Most rules one group → role map holds. */
export const GROUP_ROLE_RULES_MAX = 50;

/**
 * One rule of the ordered group → role map: a person in `group` (a group name or id as the identity provider sends it,
 * compared exactly, 1–256 characters) gets `role` (admin, developer or viewer: never owner).
 */
export const GroupRoleRuleSchema = z.object({
  group: z.string().trim().min(1).max(256),
  role: z.enum(ASSIGNABLE_ROLES),
});

/** A group → role rule; see {@link GroupRoleRuleSchema}. */
export type GroupRoleRule = z.infer<typeof GroupRoleRuleSchema>;

/** An organisation's policy as the sign-in paths read it. */
export interface SsoPolicyView {
  mode: SsoMode;
  jit: boolean;
  defaultRole: AssignableRole;
  groupsClaim: string;
  groupRoles: GroupRoleRule[];
  graceUntil: Date | null;
  enforcementSuspendedAt: Date | null;
}

const DEFAULT_POLICY: SsoPolicyView = {
  mode: "off",
  jit: false,
  defaultRole: "viewer",
  groupsClaim: "groups",
  groupRoles: [],
  graceUntil: null,
  enforcementSuspendedAt: null,
};

function toView(row: {
  mode: string;
  jit: boolean;
  defaultRole: string;
  groupsClaim: string;
  groupRoles: unknown;
  graceUntil: Date | null;
  enforcementSuspendedAt: Date | null;
}): SsoPolicyView {
  const rules = z.array(GroupRoleRuleSchema).safeParse(row.groupRoles);
  return {
    mode: (SSO_MODES as readonly string[]).includes(row.mode) ? (row.mode as SsoMode) : "off",
    jit: row.jit,
    defaultRole: (ASSIGNABLE_ROLES as readonly string[]).includes(row.defaultRole)
      ? (row.defaultRole as AssignableRole)
      : "viewer",
    groupsClaim: row.groupsClaim,
    groupRoles: rules.success ? rules.data : [],
    graceUntil: row.graceUntil,
    enforcementSuspendedAt: row.enforcementSuspendedAt,
  };
}

/** The organisation's policy; an organisation that never saved one has SSO off. */
export async function ssoPolicyOf(orgId: string): Promise<SsoPolicyView> {
  const row = await prisma().ssoPolicy.findUnique({ where: { orgId } });
  return row ? toView(row) : DEFAULT_POLICY;
}

/**
 * Whether `required` is enforced now: the mode is required, the operator has not switched enforcement off, and the
 * grace period (if any) has ended.
 */
export function isEnforced(
  policy: Pick<SsoPolicyView, "mode" | "graceUntil" | "enforcementSuspendedAt">,
  now = new Date(),
): boolean {
  if (policy.mode !== "required" || policy.enforcementSuspendedAt) return false;
  return !policy.graceUntil || policy.graceUntil.getTime() <= now.getTime();
}

/**
 * The groups a person is in, as the identity provider sent them in `claim`: an array of strings, or one string
 * (comma-separated lists split). Anything else is no groups.
 */
export function groupsFrom(claims: Record<string, unknown>, claim: string): string[] {
  const value = Object.hasOwn(claims, claim) ? claims[claim] : undefined;
  const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  return list
    .filter((item): item is string => typeof item === "string")
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * The role the map gives someone in `groups`: the first rule whose group they are in, else the default role
 * (docs/api-contract.md §11.3). Never owner.
 */
export function mappedRole(
  policy: Pick<SsoPolicyView, "groupRoles" | "defaultRole">,
  groups: string[],
): AssignableRole {
  const held = new Set(groups);
  return policy.groupRoles.find((rule) => held.has(rule.group))?.role ?? policy.defaultRole;
}

/**
 * The organisations whose enforced `required` policy refuses `userId`'s password, code and passkey sign-ins: each
 * membership of an organisation that enforces it, with whether the member is a break-glass owner there.
 */
export async function requiredMembershipsOf(
  userId: string,
  now = new Date(),
): Promise<{ all: number; required: { orgId: string; orgName: string; breakGlass: boolean; role: string }[] }> {
  const memberships = await prisma().member.findMany({
    where: { userId },
    select: {
      orgId: true,
      role: true,
      breakGlass: true,
      org: { select: { name: true, ssoPolicy: true, ssoProvider: { select: { providerId: true } } } },
    },
  });
  const required = memberships
    .filter((m) => m.org.ssoPolicy && m.org.ssoProvider && isEnforced(toView(m.org.ssoPolicy), now))
    .map((m) => ({
      orgId: m.orgId,
      orgName: m.org.name,
      breakGlass: m.breakGlass && m.role === "owner",
      role: m.role,
    }));
  return { all: memberships.length, required };
}

/**
 * The organisation that enforces `required` for email addresses of `domain` (one of its verified domains), if any:
 * password resets and sign-ups of such addresses are refused (docs/api-contract.md §11.3).
 */
export async function requiringOrganisationOfDomain(
  domain: string,
  now = new Date(),
): Promise<{ name: string } | null> {
  const claims = await prisma().ssoDomain.findMany({
    where: { domain, verifiedAt: { not: null } },
    select: { org: { select: { name: true, ssoPolicy: true } } },
  });
  const enforcing = claims.find((claim) => claim.org.ssoPolicy && isEnforced(toView(claim.org.ssoPolicy), now));
  return enforcing ? { name: enforcing.org.name } : null;
}

/** The domain of an email address, lower-case (`""` when it has none). */
export function domainOf(email: string): string {
  const at = email.lastIndexOf("@");
  return at < 0
    ? ""
    : email
        .slice(at + 1)
        .trim()
        .toLowerCase();
}
