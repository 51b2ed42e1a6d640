// Groups to roles (docs/api-contract.md §11.3, §11.5): the organisation's ordered map (`SsoPolicy.groupRoles`), the
// same for single sign-on's groups claim and the directory's SCIM Groups. The first rule whose group the person is in
// gives the role; none matching gives the policy's default role. A rule never gives `owner`.
import { prisma } from "../../db/transaction";
import { ASSIGNABLE_ROLES, type AssignableRole } from "../roles";

/** One rule of the ordered map: a group (its name or its directory id) and the role it gives. */
export interface GroupRoleRule {
  group: string;
  role: AssignableRole;
}

/** The part of an organisation's single sign-on policy provisioning reads. */
export interface DirectoryRolePolicy {
  defaultRole: AssignableRole;
  rules: GroupRoleRule[];
}

/** The role of a person in no mapped group when the organisation has no policy: `viewer`. */
export const FALLBACK_ROLE: AssignableRole = "viewer";

function assignable(value: unknown): value is AssignableRole {
  return typeof value === "string" && (ASSIGNABLE_ROLES as readonly string[]).includes(value);
}

/**
 * The rules of a stored `groupRoles` value, in order, leaving out any that is not `{ group, role }` with a non-empty
 * group and an assignable role (never `owner`).
 */
export function parseGroupRoles(value: unknown): GroupRoleRule[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry) => {
    if (typeof entry !== "object" || entry === null) return [];
    const { group, role } = entry as { group?: unknown; role?: unknown };
    return typeof group === "string" && group.trim() && assignable(role) ? [{ group: group.trim(), role }] : [];
  });
}

/** The organisation's default role and ordered rules (`viewer` and none without a policy). */
export async function directoryRolePolicy(orgId: string): Promise<DirectoryRolePolicy> {
  const policy = await prisma().ssoPolicy.findUnique({
    where: { orgId },
    select: { defaultRole: true, groupRoles: true },
  });
  return {
    defaultRole: assignable(policy?.defaultRole) ? policy.defaultRole : FALLBACK_ROLE,
    rules: parseGroupRoles(policy?.groupRoles),
  };
}

/** A SCIM Group as a rule may name it: its display name (any case) or the directory's own id (`externalId`). */
export interface DirectoryGroup {
  displayName: string;
  externalId?: string;
}

/** Whether `rule` names `group`: its `externalId` exactly, or its display name in any case. */
export function ruleNamesGroup(rule: GroupRoleRule, group: DirectoryGroup): boolean {
  return (
    (group.externalId !== undefined && rule.group === group.externalId) ||
    rule.group.toLowerCase() === group.displayName.toLowerCase()
  );
}

/** The index of the first rule naming `group`, or -1. */
export function firstRuleFor(policy: DirectoryRolePolicy, group: DirectoryGroup): number {
  return policy.rules.findIndex((rule) => ruleNamesGroup(rule, group));
}

/** The role a person in `groups` gets: the first rule (in the map's order) naming one of them, else the default. */
export function roleForGroups(policy: DirectoryRolePolicy, groups: readonly DirectoryGroup[]): AssignableRole {
  for (const rule of policy.rules) {
    if (groups.some((group) => ruleNamesGroup(rule, group))) return rule.role;
  }
  return policy.defaultRole;
}
