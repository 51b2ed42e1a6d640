// An organisation's SCIM base URL and bearer tokens (docs/api-contract.md §11.5), through the plugin's managed
// connection catalog: one connection per organisation (`provisioningDomainId` = the organisation's id), made with the
// first token and kept when tokens are revoked, so the directory's Users and Groups stay linked across tokens. One
// token works at a time; it is shown once; a rotation replaces it (the old one ends at once); a revocation ends it.
import { randomBytes } from "node:crypto";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { type AuditActor, recordSettingsAudit } from "../audit-trail/service";
import { AUTH_BASE_PATH, authFor } from "../better-auth";
import { viaAuth } from "../better-auth-errors";
import { recordDirectoryEvent } from "./events";
import { SCIM_PATH } from "./plugin";

/** Every SCIM scope a token carries: Users and Groups, read and write (docs/api-contract.md §11.5). */
export const TOKEN_SCOPES = ["scim.users.read", "scim.users.write", "scim.groups.read", "scim.groups.write"] as const;

/**
 * A token works for 365 days (31,536,000,000 ms) from its creation; rotate it before then.
 * Source: docs/api-contract.md §11.5.
 */
export const TOKEN_TTL_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The SCIM base URL of an origin: `<origin>/api/auth/scim/v2`, what a directory (Entra, Okta) is given.
 * Source: docs/api-contract.md §11.5.
 */
export function scimBaseUrl(origin: string): string {
  return `${origin.replace(/\/+$/, "")}${AUTH_BASE_PATH}${SCIM_PATH}`;
}

/** One token as the directory page lists it; never its value (docs/api-contract.md §11.5). */
export interface DirectoryTokenView {
  /** The plugin's credential id, the token's public first part (`ba_scim_credential_…`). */
  id: string;
  /** `active`, `expired` or `revoked`. */
  status: "active" | "expired" | "revoked";
  createdAt: Date;
  createdBy: string | null;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** The directory page's provisioning block (docs/api-contract.md §11.5). */
export interface DirectoryStatus {
  /** The base URL to give the directory. */
  baseUrl: string;
  /** The organisation's connection id, once a token was made. */
  connectionId: string | null;
  /** Its tokens, newest first (the last 20). */
  tokens: DirectoryTokenView[];
  /** The latest request any token made (written at most once a minute), or null. */
  lastRequestAt: Date | null;
}

/** A token just made: its value is in `token`, shown once (docs/api-contract.md §11.5). */
export interface IssuedDirectoryToken {
  token: string;
  view: DirectoryTokenView;
  /** After a rotation: the token it replaced, revoked. */
  previous?: { id: string; revokedAt: Date };
}

async function connectionOf(orgId: string) {
  return prisma().scimManagedConnection.findFirst({
    where: { provisioningDomainId: orgId, status: "active" },
    orderBy: { createdAt: "asc" },
    select: { id: true, connectionId: true },
  });
}

type CredentialRow = {
  credentialId: string;
  status: string;
  createdAt: Date;
  createdBy: string;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
};

function viewOf(row: CredentialRow, emails: Map<string, string>, now: number): DirectoryTokenView {
  const expired = row.expiresAt.getTime() <= now;
  const status =
    row.status === "revoked" || row.status === "decommissioned"
      ? "revoked"
      : row.status === "expired" || expired
        ? "expired"
        : "active";
  return {
    id: row.credentialId,
    status,
    createdAt: row.createdAt,
    createdBy: emails.get(row.createdBy) ?? null,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt ?? null,
    revokedAt: row.revokedAt ?? null,
  };
}

async function emailsOf(userIds: string[]): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const users = await prisma().user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true } });
  return new Map(users.map((user) => [user.id, user.email]));
}

const credentialSelect = {
  credentialId: true,
  status: true,
  createdAt: true,
  createdBy: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

/**
 * The organisation's SCIM base URL on `origin`, its connection and its tokens (newest first, the last 20), with the
 * latest request any of them made.
 * Source: docs/api-contract.md §11.5.
 */
export async function directoryStatus(orgId: string, origin: string): Promise<DirectoryStatus> {
  const connection = await connectionOf(orgId);
  const rows = connection
    ? await prisma().scimManagedCredential.findMany({
        where: { connectionRecordId: connection.id },
        orderBy: { createdAt: "desc" },
        take: 20,
        select: credentialSelect,
      })
    : [];
  const emails = await emailsOf([...new Set(rows.map((row) => row.createdBy))]);
  const now = Date.now();
  const lastRequestAt = rows.reduce<Date | null>(
    (latest, row) => (row.lastUsedAt && (!latest || row.lastUsedAt > latest) ? row.lastUsedAt : latest),
    null,
  );
  return {
    baseUrl: scimBaseUrl(origin),
    connectionId: connection?.connectionId ?? null,
    tokens: rows.map((row) => viewOf(row, emails, now)),
    lastRequestAt,
  };
}

/**
 * Who makes a token change: the member (their user id is the plugin's `actorId`) and their audit actor.
 * Source: docs/api-contract.md §11.5.
 */
export interface TokenChangeBy {
  orgId: string;
  userId: string;
  origin: string;
  actor: AuditActor;
}

async function workingTokens(connectionRecordId: string, now: number) {
  return prisma().scimManagedCredential.findMany({
    where: { connectionRecordId, status: "active", expiresAt: { gt: new Date(now) } },
    orderBy: { createdAt: "desc" },
    select: { credentialId: true, expiresAt: true },
  });
}

/**
 * Makes the organisation's SCIM token: the first one creates its connection (the plugin's
 * `createSCIMManagedConnection`), a later one (every earlier token revoked or expired) is issued on the same
 * connection (`rotateSCIMManagedCredential`), so the directory's resources stay linked. One transaction with its audit
 * entry (`scim.tokenCreated`) and directory event (`token.created`).
 * @returns the token (shown once) and its view.
 * @throws ApiError `conflict` (409) when a token still works: rotate or revoke it instead.
 * Source: docs/api-contract.md §11.5.
 */
export async function createDirectoryToken(by: TokenChangeBy): Promise<IssuedDirectoryToken> {
  const auth = authFor(by.origin);
  return transaction(async () => {
    await prisma().$queryRaw`SELECT id FROM "Organisation" WHERE id = ${by.orgId} FOR NO KEY UPDATE`;
    const now = Date.now();
    const connection = await connectionOf(by.orgId);
    if (connection && (await workingTokens(connection.id, now)).length > 0) {
      throw new ApiError("conflict", "This organisation already has a working SCIM token: rotate or revoke it");
    }
    const expiresAt = new Date(now + TOKEN_TTL_MS);
    const issued = connection
      ? await viaAuth(() =>
          auth.api.rotateSCIMManagedCredential({
            body: {
              connectionId: connection.connectionId,
              provisioningDomainId: by.orgId,
              actorId: by.userId,
              scopes: [...TOKEN_SCOPES],
              expiresAt,
            },
          }),
        )
      : await viaAuth(() =>
          auth.api.createSCIMManagedConnection({
            body: {
              creationRequestId: `org-${by.orgId}-${randomBytes(12).toString("base64url")}`,
              provisioningDomainId: by.orgId,
              actorId: by.userId,
              scopes: [...TOKEN_SCOPES],
              expiresAt,
            },
          }),
        );
    const id = issued.credential.credentialId;
    await recordSettingsAudit(by.orgId, by.actor, {
      action: "scim.tokenCreated",
      target: `SCIM token ${id}`,
      details: { connectionId: issued.connection.connectionId, expiresAt: expiresAt.toISOString() },
    });
    await recordDirectoryEvent(by.orgId, { action: "token.created", target: id });
    return { token: issued.token, view: await tokenView(id) };
  });
}

async function tokenView(credentialId: string): Promise<DirectoryTokenView> {
  const row = await prisma().scimManagedCredential.findUniqueOrThrow({
    where: { credentialId },
    select: credentialSelect,
  });
  return viewOf(row, await emailsOf([row.createdBy]), Date.now());
}

/**
 * Rotates the organisation's SCIM token (docs/single-sign-on.md §7): the working token is revoked and a new one issued
 * on the same connection (the plugin's `revokeSCIMManagedCredential`, then `rotateSCIMManagedCredential`), in one
 * transaction with the audit entries (`scim.tokenRevoked`, `scim.tokenRotated`) and directory events
 * (`token.revoked`, `token.rotated`): the directory's next request with the old token gets 401, so paste the new one
 * at once.
 * @returns the new token (shown once), its view and `previous: { id, revokedAt }`.
 * @throws ApiError `not_found` (404) when no token works: create one instead.
 * Source: docs/api-contract.md §11.5.
 */
export async function rotateDirectoryToken(by: TokenChangeBy): Promise<IssuedDirectoryToken> {
  const auth = authFor(by.origin);
  return transaction(async () => {
    await prisma().$queryRaw`SELECT id FROM "Organisation" WHERE id = ${by.orgId} FOR NO KEY UPDATE`;
    const now = Date.now();
    const connection = await connectionOf(by.orgId);
    const working = connection ? await workingTokens(connection.id, now) : [];
    const current = working[0];
    if (!connection || !current) {
      throw new ApiError("not_found", "This organisation has no working SCIM token to rotate: create one");
    }
    for (const token of working) await revokeCredential(by, connection.connectionId, token.credentialId);
    const issued = await viaAuth(() =>
      auth.api.rotateSCIMManagedCredential({
        body: {
          connectionId: connection.connectionId,
          provisioningDomainId: by.orgId,
          actorId: by.userId,
          scopes: [...TOKEN_SCOPES],
          expiresAt: new Date(now + TOKEN_TTL_MS),
        },
      }),
    );
    const id = issued.credential.credentialId;
    await recordSettingsAudit(by.orgId, by.actor, {
      action: "scim.tokenRotated",
      target: `SCIM token ${current.credentialId}`,
      details: { successorId: id },
    });
    await recordDirectoryEvent(by.orgId, {
      action: "token.rotated",
      target: id,
      details: { previous: current.credentialId },
    });
    return {
      token: issued.token,
      view: await tokenView(id),
      previous: { id: current.credentialId, revokedAt: new Date() },
    };
  });
}

async function revokeCredential(by: TokenChangeBy, connectionId: string, credentialId: string): Promise<void> {
  await viaAuth(() =>
    authFor(by.origin).api.revokeSCIMManagedCredential({
      body: { connectionId, provisioningDomainId: by.orgId, credentialId, actorId: by.userId },
    }),
  );
  await recordSettingsAudit(by.orgId, by.actor, {
    action: "scim.tokenRevoked",
    target: `SCIM token ${credentialId}`,
  });
  await recordDirectoryEvent(by.orgId, { action: "token.revoked", target: credentialId });
}

/**
 * Revokes one of the organisation's SCIM tokens at once (the plugin's `revokeSCIMManagedCredential`): the directory's
 * next request with it gets 401. The connection and what it provisioned stay; nobody is deprovisioned. One
 * transaction with its audit entry (`scim.tokenRevoked`) and directory event (`token.revoked`).
 * @throws ApiError `not_found` (404) when `credentialId` is not a working token of the organisation.
 * Source: docs/api-contract.md §11.5.
 */
export async function revokeDirectoryToken(by: TokenChangeBy, credentialId: string): Promise<void> {
  await transaction(async () => {
    await prisma().$queryRaw`SELECT id FROM "Organisation" WHERE id = ${by.orgId} FOR NO KEY UPDATE`;
    const connection = await connectionOf(by.orgId);
    const working = connection ? await workingTokens(connection.id, Date.now()) : [];
    if (!connection || !working.some((row) => row.credentialId === credentialId)) {
      throw new ApiError("not_found", `SCIM token ${credentialId} is not a working token of this organisation`);
    }
    await revokeCredential(by, connection.connectionId, credentialId);
  });
}

/**
 * The organisation's service keys that still work (`ApiKey.serviceKey`): the keys a deprovisioning never revokes,
 * whoever created them, which the directory page names.
 * Source: docs/api-contract.md §11.5.
 */
export function serviceKeys(orgId: string) {
  return prisma().apiKey.findMany({
    where: { orgId, serviceKey: true, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    select: { id: true, name: true, prefix: true, isTest: true, createdBy: { select: { email: true } } },
    orderBy: { createdAt: "desc" },
  });
}
