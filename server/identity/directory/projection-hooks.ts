// The two callbacks the SCIM plugin's configuration (./plugin.ts) hands to our membership rules (./projection.ts),
// bound late: the rules end memberships through services that use better-auth, whose instance installs the plugin,
// so the plugin's configuration cannot import them without a circle of imports. ./projection.ts registers them when
// it is loaded, which the SCIM door (server/http/scim.ts) does; one registry per process, as the better-auth
// instances are (Next.js bundles its own copy of this module beside the server's).
/**
 * The plugin's verdict on an incoming SCIM User: a new user, or one we already have (their profile left as it is).
 * Source: docs/api-contract.md §11.5.
 */
export type DirectoryIdentity = { action: "create" } | { action: "link"; userId: string; profile: "preserve" };

/**
 * The state the plugin hands the projection for one person and organisation (`SCIMProjectedUserState`).
 * Source: docs/api-contract.md §11.5.
 */
export interface ProjectedMembership {
  provisioningDomainId: string;
  userId: string;
  active: boolean;
  grants: readonly { source: { id: string; externalId?: string; displayName: string }; role: string }[];
}

/** What the plugin's `identity.resolveUser` and `projection.reconcileUser` run (docs/api-contract.md §11.5). */
export interface DirectoryProjectionHooks {
  resolveUser(input: { provisioningDomainId: string; resource: { primaryEmail: string } }): Promise<DirectoryIdentity>;
  reconcileUser(state: ProjectedMembership): Promise<void>;
}

const holder = globalThis as unknown as { __crmDirectoryHooks?: DirectoryProjectionHooks };

/** Registers the membership rules, once, as ./projection.ts loads (docs/api-contract.md §11.5). */
export function registerDirectoryProjection(hooks: DirectoryProjectionHooks): void {
  holder.__crmDirectoryHooks = hooks;
}

/**
 * The registered membership rules.
 * @throws Error when ./projection.ts was never loaded in this process (the plugin answers a SCIM 500 then): a process
 *         serving SCIM loads it through the SCIM door.
 * Source: docs/api-contract.md §11.5.
 */
export function directoryProjection(): DirectoryProjectionHooks {
  const hooks = holder.__crmDirectoryHooks;
  if (!hooks)
    throw new Error("The directory's membership rules are not loaded (import server/identity/directory/projection)");
  return hooks;
}
