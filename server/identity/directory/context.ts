// What one SCIM request carries into the plugin's callbacks (docs/api-contract.md §11.5): the client address and user
// agent the audit entries of a deprovisioning name, and the directory events found to be refusals, which are written
// after the request's transaction has rolled back. Set by the SCIM door (./http.ts) around better-auth's handler.
import { AsyncLocalStorage } from "node:async_hooks";
import type { SettingsActor } from "../audit-trail/service";
import type { DirectoryAction } from "./events";

/**
 * A directory event to write once the request is answered (an error the transaction could not keep).
 * Source: docs/api-contract.md §11.5.
 */
export interface PendingDirectoryEvent {
  orgId: string;
  action: DirectoryAction;
  target: string | null;
  details: Record<string, string | number | boolean | null>;
}

/** The SCIM request being answered (docs/api-contract.md §11.5). */
export interface DirectoryRequest {
  ip: string | null;
  userAgent: string | null;
  /** The organisation the request's token belongs to, once a callback has learnt it. */
  orgId?: string;
  /** Refusals found inside the request's transaction, recorded after it ({@link PendingDirectoryEvent}). */
  refusals: PendingDirectoryEvent[];
}

// One per process, as the better-auth instances are (Next.js bundles its own copy of this module beside the server's).
const holder = globalThis as unknown as { __crmDirectoryRequest?: AsyncLocalStorage<DirectoryRequest> };
holder.__crmDirectoryRequest ??= new AsyncLocalStorage<DirectoryRequest>();
const storage = holder.__crmDirectoryRequest;

/**
 * Runs `work` (better-auth's handler for one SCIM request) with `request` as {@link currentDirectoryRequest}.
 * Source: docs/api-contract.md §11.5.
 */
export function withDirectoryRequest<T>(request: DirectoryRequest, work: () => Promise<T>): Promise<T> {
  return storage.run(request, work);
}

/**
 * The SCIM request being answered, or undefined outside the SCIM door (a direct call of the plugin's API).
 * Source: docs/api-contract.md §11.5.
 */
export function currentDirectoryRequest(): DirectoryRequest | undefined {
  return storage.getStore();
}

/**
 * Who the directory's changes are by in the settings audit trail: `Directory (SCIM)` from the request's address.
 * Source: docs/api-contract.md §11.5.
 */
export function directoryActor(): SettingsActor {
  const request = currentDirectoryRequest();
  return { userId: null, email: DIRECTORY_ACTOR, ip: request?.ip ?? null, userAgent: request?.userAgent ?? null };
}

/** The name the audit trail gives the directory as an actor (docs/api-contract.md §11.5). */
export const DIRECTORY_ACTOR = "Directory (SCIM)";
