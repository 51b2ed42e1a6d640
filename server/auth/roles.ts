// The roles of an organisation's members and what each may do in the settings (docs/architecture.md,
// "Settings: sign-in, team and roles"), as better-auth access control: the organization plugin checks its own endpoints
// (invitations, members) against these roles, and the settings router checks every other action with `can()`.
import { createAccessControl } from "better-auth/plugins/access";

/**
 * Every resource and action a role can be granted. `organization`, `member` and `invitation` are the names the
 * better-auth organization plugin checks on its own endpoints (`organization:transfer` is ours); `apiKey`, `webhook`,
 * `usage` and `audit` are the settings pages' own.
 */
export const STATEMENTS = {
  organization: ["update", "transfer", "delete"],
  member: ["create", "update", "delete"],
  invitation: ["create", "cancel"],
  apiKey: ["read", "manageTest", "manageLive"],
  webhook: ["read", "manage"],
  usage: ["read"],
  audit: ["read"],
} as const;

/** The access controller built from {@link STATEMENTS}; handed to the organization plugin as `ac`. */
export const accessControl = createAccessControl(STATEMENTS);

const SEE = { apiKey: ["read"], webhook: ["read"], usage: ["read"] } as const;
const TEAM = { member: ["create", "update", "delete"], invitation: ["create", "cancel"] } as const;

/**
 * The four fixed roles (names never change; an organisation always keeps at least one owner):
 * - `owner`: everything, including transferring ownership and deleting the organisation.
 * - `admin`: everything but those two: keys (test and live), endpoints, the team (never to or from owner), settings.
 * - `developer`: test keys and webhook endpoints; sees everything else.
 * - `viewer`: sees keys (prefix, scopes, last use; never secrets), endpoints, deliveries and usage; changes nothing.
 */
export const roles = {
  owner: accessControl.newRole({
    ...SEE,
    ...TEAM,
    organization: ["update", "transfer", "delete"],
    apiKey: ["read", "manageTest", "manageLive"],
    webhook: ["read", "manage"],
    audit: ["read"],
  }),
  admin: accessControl.newRole({
    ...SEE,
    ...TEAM,
    organization: ["update"],
    apiKey: ["read", "manageTest", "manageLive"],
    webhook: ["read", "manage"],
    audit: ["read"],
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
  admin: "Keys (test and live), webhook endpoints, the team and the organisation's settings",
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
