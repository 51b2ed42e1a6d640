// Who did what in the settings (docs/architecture.md, "Settings: sign-in, team and roles"): one row per sign-in
// (and failed one), team change, key, endpoint and secret change, and refused action, with time, actor, organisation,
// target and address. Kept like the API audit log: never purged, removed with the organisation.
import type { Prisma } from "../db/generated/client";
import { outsideTransaction, prisma } from "../db/transaction";
import { ApiError } from "../errors";
import { replaceUnstorableText } from "../schemas/storable";
import { listPage } from "./pagination";

/** Every action the trail records, with how the audit page names it. */
export const SETTINGS_AUDIT_ACTIONS = {
  "signin.succeeded": "Signed in",
  "signin.failed": "Sign-in failed",
  signout: "Signed out",
  "session.revoked": "Session revoked",
  "password.reset": "Password reset",
  "twoFactor.enabled": "Two-factor enabled",
  "twoFactor.disabled": "Two-factor disabled",
  "passkey.added": "Passkey added",
  "passkey.removed": "Passkey removed",
  "invitation.created": "Invitation sent",
  "invitation.accepted": "Invitation accepted",
  "invitation.revoked": "Invitation revoked",
  "member.removed": "Member removed",
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
  action: string;
  target: string | null;
  details: Prisma.JsonValue;
  ip: string | null;
  userAgent: string | null;
}

function text(value: string | null | undefined, max: number): string | null {
  return value === null || value === undefined ? null : replaceUnstorableText(value).slice(0, max);
}

function row(orgId: string | null, actor: SettingsActor, entry: SettingsAuditInput) {
  return {
    orgId,
    actorUserId: actor.userId,
    actorEmail: text(actor.email, 320) ?? "unknown",
    action: entry.action,
    target: text(entry.target, 500),
    details: entry.details ?? undefined,
    ip: text(actor.ip, 64),
    userAgent: text(actor.userAgent, 500),
  };
}

/**
 * Writes one entry of organisation `orgId`'s trail. Inside a {@link transaction} it joins it, so the change and its
 * entry commit (or roll back) together.
 */
export async function recordSettingsAudit(
  orgId: string,
  actor: SettingsActor,
  entry: SettingsAuditInput,
): Promise<void> {
  await prisma().settingsAuditEntry.create({ data: row(orgId, actor, entry) });
}

/**
 * Writes a refused action (`action.refused`) outside any transaction, so it stays when the refused work rolls back.
 * `details.permission` names what was missing; `details.attempted` the action tried.
 */
export async function recordRefusal(
  orgId: string,
  actor: SettingsActor,
  attempted: string,
  reason: string,
  target?: string | null,
): Promise<void> {
  await outsideTransaction(() =>
    recordSettingsAudit(orgId, actor, { action: "action.refused", target, details: { attempted, reason } }),
  );
}

/**
 * Writes an entry about a user (sign-ins, passkeys, two-factor) into the trail of every organisation the user is a
 * member of, or once without an organisation when there is no such user (a failed sign-in with an unknown email).
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
  await outsideTransaction(() => prisma().settingsAuditEntry.createMany({ data: rows }));
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
