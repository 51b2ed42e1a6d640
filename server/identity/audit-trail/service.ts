// Who did what in the settings (docs/architecture.md, "Settings: sign-in, team and roles"): one row per sign-in
// (and failed one), failed password or code check, team change, key, endpoint and secret change (from the settings
// or through /api/v1), test event, redelivery and refused action, with time, actor, organisation, target and address.
// Written by the service that makes the change, inside its transaction. Kept like the API audit log: never purged,
// removed with the organisation.

import { replaceUnstorableText } from "../../contract/storable";
import type { Prisma } from "../../db/generated/client";
import { prisma } from "../../db/transaction";
import { ApiError } from "../../errors";
import { listPage } from "../../records/pagination";

/** Every action the trail records, with how the audit page names it. */
export const SETTINGS_AUDIT_ACTIONS = {
  "signin.succeeded": "Signed in",
  "signin.failed": "Sign-in failed",
  "verification.failed": "Password or code refused",
  signout: "Signed out",
  "session.revoked": "Session revoked",
  "password.reset": "Password reset",
  "twoFactor.enabled": "Two-factor enabled",
  "twoFactor.disabled": "Two-factor disabled",
  "twoFactor.backupCodesReplaced": "Backup codes replaced",
  "passkey.added": "Passkey added",
  "passkey.removed": "Passkey removed",
  "invitation.created": "Invitation sent",
  "invitation.accepted": "Invitation accepted",
  "invitation.revoked": "Invitation revoked",
  "member.removed": "Member removed",
  "member.provisioned": "Member added by the directory",
  "member.roleChanged": "Role changed",
  "organisation.ownershipTransferred": "Ownership transferred",
  "organisation.settingsChanged": "Organisation settings changed",
  "apiKey.created": "Key created",
  "apiKey.rotated": "Key rotated",
  "apiKey.revoked": "Key revoked",
  "webhookEndpoint.created": "Endpoint created",
  "webhookEndpoint.changed": "Endpoint changed",
  "webhookEndpoint.deleted": "Endpoint deleted",
  "webhookSecret.rotated": "Signing secret rotated",
  "webhookSecret.revealed": "Signing secret revealed",
  "webhookEndpoint.tested": "Test event sent",
  "webhookDelivery.redelivered": "Delivery sent again",
  "customField.created": "Custom field created",
  "customField.changed": "Custom field changed",
  "customField.archived": "Custom field archived",
  "webhookReplay.started": "Replay started",
  "webhookReplay.cancelled": "Replay cancelled",
  "sso.providerConfigured": "Identity provider configured",
  "sso.providerRemoved": "Identity provider removed",
  "sso.domainAdded": "SSO domain added",
  "sso.domainVerified": "SSO domain verified",
  "sso.domainRemoved": "SSO domain removed",
  "sso.policyChanged": "SSO policy changed",
  "sso.connectionTested": "SSO connection tested",
  "sso.breakGlassUsed": "Break-glass sign-in",
  "sso.enforcementSuspended": "SSO enforcement switched off by the operator",
  "member.joined": "Member joined through single sign-on",
  "member.reactivated": "Member reactivated by the directory",
  "scim.tokenCreated": "Directory token created",
  "scim.tokenRotated": "Directory token rotated",
  "scim.tokenRevoked": "Directory token revoked",
  "action.refused": "Action refused",
} as const;

/** An action of the trail, e.g. `apiKey.created`. */
export type SettingsAuditAction = keyof typeof SETTINGS_AUDIT_ACTIONS;

/** Who acted and from where: the user (id and email at the time) and the request's client address and user agent. */
export interface SettingsActor {
  userId: string | null;
  email: string;
  ip: string | null;
  userAgent: string | null;
}

/**
 * An API key acting through /api/v1: the entry names the key and, in `details.keyCreatedBy`, its creator, with the
 * request's client address and user agent as a member's entry has them.
 */
export interface ApiKeyActor {
  apiKeyId: string;
  ip: string | null;
  userAgent: string | null;
}

/** Who an entry is by: a member in the settings (or the operator command), or an API key. */
export type AuditActor = SettingsActor | ApiKeyActor;

/** One entry to write: the action, what it was on (in words) and structured facts (key mode, roles, permission). */
export interface SettingsAuditInput {
  action: SettingsAuditAction;
  target?: string | null;
  details?: Record<string, string | number | boolean | null>;
}

/** One entry as the audit page shows it; `id` is the row's BIGSERIAL as a decimal string. */
export interface SettingsAuditView {
  id: string;
  createdAt: Date;
  actorUserId: string | null;
  actorEmail: string;
  /** The API key that acted (a change through /api/v1), else null. */
  actorApiKeyId: string | null;
  action: string;
  target: string | null;
  details: Prisma.JsonValue;
  ip: string | null;
  userAgent: string | null;
}

function text(value: string | null | undefined, max: number): string | null {
  return value === null || value === undefined ? null : replaceUnstorableText(value).slice(0, max);
}

function row(orgId: string | null, actor: SettingsActor & { apiKeyId?: string }, entry: SettingsAuditInput) {
  return {
    orgId,
    actorUserId: actor.userId,
    actorEmail: text(actor.email, 320) ?? "unknown",
    actorApiKeyId: actor.apiKeyId ?? null,
    action: entry.action,
    target: text(entry.target, 500),
    details: entry.details ?? undefined,
    ip: text(actor.ip, 64),
    userAgent: text(actor.userAgent, 500),
  };
}

/** An API key as the actor of an entry: `API key msp_live_AbCd… "PSA sync"`, its creator in the details. */
async function keyActor(orgId: string, { apiKeyId, ip, userAgent }: ApiKeyActor) {
  const key = await prisma().apiKey.findFirst({
    where: { id: apiKeyId, orgId },
    select: { prefix: true, name: true, createdBy: { select: { email: true } } },
  });
  return {
    actor: {
      userId: null,
      email: key ? `API key ${key.prefix}… "${key.name}"` : `API key ${apiKeyId}`,
      apiKeyId,
      ip,
      userAgent,
    },
    keyCreatedBy: key?.createdBy?.email ?? "operator command",
  };
}

/**
 * Writes one entry of organisation `orgId`'s trail with the current client: inside a transaction it joins it, so the
 * change and its entry commit (or roll back) together; the services that make a change call it there. An API key
 * actor is named by its prefix and name, with its creator in `details.keyCreatedBy`.
 */
export async function recordSettingsAudit(orgId: string, actor: AuditActor, entry: SettingsAuditInput): Promise<void> {
  if ("apiKeyId" in actor && !("email" in actor)) {
    const { actor: key, keyCreatedBy } = await keyActor(orgId, actor);
    await prisma().settingsAuditEntry.create({
      data: row(orgId, key, { ...entry, details: { ...entry.details, keyCreatedBy } }),
    });
    return;
  }
  await prisma().settingsAuditEntry.create({ data: row(orgId, actor as SettingsActor, entry) });
}

/**
 * Writes a refused action (`action.refused`): `details.attempted` names the action tried, `details.reason` why it
 * was refused. Called where nothing was written (before the action's transaction, or after it rolled back), so the
 * entry stays.
 */
export async function recordRefusal(
  orgId: string,
  actor: SettingsActor,
  attempted: string,
  reason: string,
  target?: string | null,
): Promise<void> {
  await recordSettingsAudit(orgId, actor, { action: "action.refused", target, details: { attempted, reason } });
}

/**
 * Writes an entry about a user (sign-ins, failed password or code checks, passkeys, two-factor) into the trail of
 * every organisation the user is a member of, or once without an organisation when there is no such user (a failed
 * sign-in with an unknown email). Called by better-auth's hooks, outside any transaction of ours.
 */
export async function recordSettingsAuditForUser(
  userId: string | null,
  entry: SettingsAuditInput & { actorEmail: string; ip: string | null; userAgent: string | null },
): Promise<void> {
  const actor: SettingsActor = { userId, email: entry.actorEmail, ip: entry.ip, userAgent: entry.userAgent };
  const orgIds = userId
    ? (await prisma().member.findMany({ where: { userId }, select: { orgId: true } })).map((member) => member.orgId)
    : [];
  const rows = orgIds.length > 0 ? orgIds.map((orgId) => row(orgId, actor, entry)) : [row(null, actor, entry)];
  await prisma().settingsAuditEntry.createMany({ data: rows });
}

/** Filters and page of {@link listSettingsAudit}. */
export interface SettingsAuditQuery {
  /** Only entries by this actor: a user id, or an email for actors without an account. */
  actor?: string;
  /** Only this action (one of {@link SETTINGS_AUDIT_ACTIONS}). */
  action?: string;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** Page size, 1–100, default 50. */
  limit?: number;
}

const auditSelect = {
  id: true,
  createdAt: true,
  actorUserId: true,
  actorEmail: true,
  actorApiKeyId: true,
  action: true,
  target: true,
  details: true,
  ip: true,
  userAgent: true,
} satisfies Prisma.SettingsAuditEntrySelect;

/**
 * The organisation's settings trail, newest first, keyset-paginated over `(createdAt, id)`.
 * @returns `{ data: SettingsAuditView[], hasMore, nextCursor }`.
 * @throws ApiError `validation_error` (422) for an unknown action or a limit outside 1–100; `bad_request` (400) for
 *         a cursor that names no entry of the organisation.
 */
export function listSettingsAudit(
  orgId: string,
  query: SettingsAuditQuery = {},
): Promise<{ data: SettingsAuditView[]; hasMore: boolean; nextCursor: string | null }> {
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new ApiError("validation_error", "limit must be an integer from 1 to 100");
  }
  const where: Prisma.SettingsAuditEntryWhereInput = { orgId };
  if (query.action) {
    if (!Object.hasOwn(SETTINGS_AUDIT_ACTIONS, query.action)) {
      throw new ApiError("validation_error", `Unknown action ${query.action}`, {
        details: [{ path: ["action"], message: "Unknown action" }],
      });
    }
    where.action = query.action;
  }
  if (query.actor) where.OR = [{ actorUserId: query.actor }, { actorUserId: null, actorEmail: query.actor }];
  return listPage({
    query: { limit, cursor: query.cursor },
    fields: { createdAt: { nullable: false } },
    defaultSort: [{ field: "createdAt", direction: "desc" }],
    filters: [where],
    findCursor: async (cursor) =>
      /^\d{1,19}$/.test(cursor)
        ? prisma().settingsAuditEntry.findFirst({ where: { orgId, id: BigInt(cursor) }, select: auditSelect })
        : null,
    findMany: (args) =>
      prisma().settingsAuditEntry.findMany({
        ...(args as Prisma.SettingsAuditEntryFindManyArgs),
        select: auditSelect,
      }),
    map: (entry) => ({ ...entry, id: entry.id.toString() }),
  });
}

/** The actors of the organisation's trail, for the audit page's filter: user id (or email) and email, by email. */
export async function listSettingsAuditActors(orgId: string): Promise<{ value: string; email: string }[]> {
  const rows = await prisma().settingsAuditEntry.findMany({
    where: { orgId },
    distinct: ["actorUserId", "actorEmail"],
    select: { actorUserId: true, actorEmail: true },
    orderBy: { actorEmail: "asc" },
    take: 500,
  });
  const seen = new Map<string, string>();
  for (const entry of rows) seen.set(entry.actorUserId ?? entry.actorEmail, entry.actorEmail);
  return [...seen].map(([value, email]) => ({ value, email }));
}
