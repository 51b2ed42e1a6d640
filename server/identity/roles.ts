// The roles of an organisation's members and what each may do in the settings (docs/architecture.md,
// "Settings: sign-in, team and roles"), as better-auth access control: the organization plugin checks its own endpoints
// (invitations, members) against these roles, and the settings router checks every other action with `can()`.
import { createAccessControl } from "better-auth/plugins/access";

/**
 * Every resource and action a role can be granted. `organization`, `member` and `invitation` are the names the
 * better-auth organization plugin checks on its own endpoints (`organization:transfer` is ours); `apiKey`, `webhook`,
 * `usage`, `audit` and `customField` are the settings pages' own.
 */
export const STATEMENTS = {
  organization: ["update", "transfer", "delete"],
  member: ["create", "update", "delete"],
  invitation: ["create", "cancel"],
  apiKey: ["read", "manageTest", "manageLive"],
  webhook: ["read", "manage"],
  usage: ["read"],
  audit: ["read"],
  customField: ["read", "manage"],
} as const;

/** The access controller built from {@link STATEMENTS}; handed to the organization plugin as `ac`. */
export const accessControl = createAccessControl(STATEMENTS);

const SEE = { apiKey: ["read"], webhook: ["read"], usage: ["read"], customField: ["read"] } as const;
const TEAM = { member: ["create", "update", "delete"], invitation: ["create", "cancel"] } as const;

/**
 * The four fixed roles (names never change; an organisation always keeps at least one owner):
 * - `owner`: everything, including transferring ownership and deleting the organisation.
 * - `admin`: everything but those two: keys (test and live), endpoints, the team (never to or from owner), settings,
 *   custom fields.
 * - `developer`: test keys and webhook endpoints; sees everything else.
 * - `viewer`: sees keys (prefix, scopes, last use; never secrets), endpoints, deliveries, usage and custom fields;
 *   changes nothing.
 */
export const roles = {
  owner: accessControl.newRole({
    ...SEE,
    ...TEAM,
    organization: ["update", "transfer", "delete"],
    apiKey: ["read", "manageTest", "manageLive"],
    webhook: ["read", "manage"],
    audit: ["read"],
    customField: ["read", "manage"],
  }),
  admin: accessControl.newRole({
    ...SEE,
    ...TEAM,
    organization: ["update"],
    apiKey: ["read", "manageTest", "manageLive"],
    webhook: ["read", "manage"],
    audit: ["read"],
    customField: ["read", "manage"],
  }),
  developer: accessControl.newRole({ ...SEE, apiKey: ["read", "manageTest"], webhook: ["read", "manage"] }),
  viewer: accessControl.newRole(SEE),
};

/** A role name: `owner`, `admin`, `developer` or `viewer`. */
export type Role = keyof typeof roles;

/** The role names, most powerful first (the order pages list them in). */
export const ROLE_NAMES: readonly Role[] = ["owner", "admin", "developer", "viewer"];

/** What each role is for, in the pages' words. */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  owner: "Everything, including transferring ownership and deleting the organisation",
  admin: "Keys (test and live), webhook endpoints, custom fields, the team and the organisation's settings",
  developer: "Test keys and webhook endpoints; sees everything else",
  viewer: "Sees keys, endpoints, deliveries and usage; changes nothing",
};

/** One permission as `resource:action`, e.g. `apiKey:manageLive`. */
export type Permission = {
  [Resource in keyof typeof STATEMENTS]: `${Resource}:${(typeof STATEMENTS)[Resource][number]}`;
}[keyof typeof STATEMENTS];

/** Whether `value` is one of the four role names. */
export function isRole(value: unknown): value is Role {
  return typeof value === "string" && Object.hasOwn(roles, value);
}

/**
 * Whether a member with `role` holds `permission`: the one check behind every settings action on the server and
 * every control a page shows or hides. An unknown role holds nothing.
 */
export function can(role: string, permission: Permission): boolean {
  if (!isRole(role)) return false;
  const [resource, action] = permission.split(":") as [keyof typeof STATEMENTS, string];
  return roles[role].authorize({ [resource]: [action] }).success;
}

/** Roles an invitation or a role change may give: every role but owner (ownership is transferred, never granted). */
export const ASSIGNABLE_ROLES = ["admin", "developer", "viewer"] as const;

/** A role an invitation or a role change may give. */
export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

/**
 * The roles a member with `role` may give by invitation: every assignable role for those who may invite (owners,
 * admins), none for the others. A member who loses that right (demoted or removed) has their pending invitations
 * withdrawn, and one accepted later is refused (docs/api-contract.md §5.10).
 */
export function grantableRoles(role: string): readonly AssignableRole[] {
  return can(role, "invitation:create") ? ASSIGNABLE_ROLES : [];
}

/**
 * The settings permission a key scope needs from the member who creates (or rotates) the key, beyond the key's mode
 * (test keys: `apiKey:manageTest`, live keys: `apiKey:manageLive`): a key never lets anyone do through `/api/v1` what
 * its creator's role may not do in the settings (docs/api-contract.md §5.10).
 * - `webhooks:read` / `webhooks:write`: see / change endpoints, secrets and deliveries (`webhook:read` / `webhook:manage`).
 * - `admin:read`: every read scope, those added later too, the name of an administrator's reach: owners and admins
 *   (`audit:read`, the permission of reading everything the organisation's settings record).
 * - `custom_fields:read` / `custom_fields:write`: see / change the organisation's custom fields (`customField:read`
 *   / `customField:manage`): a key that defines fields is one an owner or admin made.
 * - the data scopes (accounts, contacts, deals, …, `events:read`): the organisation's records, which any member who
 *   may create a key of that mode may let it read or write, as before.
 */
export function permissionForScope(scope: string): Permission | null {
  if (scope === "webhooks:read") return "webhook:read";
  if (scope === "webhooks:write") return "webhook:manage";
  if (scope === "admin:read") return "audit:read";
  if (scope === "custom_fields:read") return "customField:read";
  if (scope === "custom_fields:write") return "customField:manage";
  return null;
}

/**
 * The scopes of `scopes` a member with `role` may not put on a key (`admin:read` for developers, …), by
 * {@link permissionForScope}: refused when creating or rotating a key and when consenting to an OAuth client
 * (docs/api-contract.md §5.10, §10.6).
 */
export function scopesBeyondRole(role: string, scopes: readonly string[]): string[] {
  return scopes.filter((scope) => {
    const needed = permissionForScope(scope.trim());
    return needed !== null && !can(role, needed);
  });
}

/** What each permission lets a member do, in the words a refusal uses ("Your role (viewer) cannot …"). */
export const PERMISSION_WORDS: Record<Permission, string> = {
  "organization:update": "change the organisation's settings",
  "organization:transfer": "transfer ownership",
  "organization:delete": "delete the organisation",
  "member:create": "add members",
  "member:update": "change members' roles",
  "member:delete": "remove members",
  "invitation:create": "invite members",
  "invitation:cancel": "revoke invitations",
  "apiKey:read": "see API keys",
  "apiKey:manageTest": "create, rotate or revoke test keys",
  "apiKey:manageLive": "create, rotate or revoke live keys",
  "webhook:read": "see webhook endpoints",
  "webhook:manage": "change webhook endpoints, their secrets and deliveries",
  "usage:read": "see usage",
  "audit:read": "see the audit trail",
  "customField:read": "see custom fields",
  "customField:manage": "create, change or archive custom fields",
};

/** The refusal of a permission a role lacks: "Your role (viewer) cannot invite members: ask an owner or admin of Acme". */
export function refusalMessage(role: string, permission: Permission, orgName: string): string {
  return `Your role (${role}) cannot ${PERMISSION_WORDS[permission]}: ask an owner or admin of ${orgName}`;
}
