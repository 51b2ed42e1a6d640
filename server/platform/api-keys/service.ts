import { afterCommit, outsideTransaction, prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { type AuditActor, recordSettingsAudit } from "../../identity/audit-trail/service";
import { PLAN_LIMITS } from "../organisations";
import { generateApiKey, hashApiKey, parseApiKey } from "./format";
import { cachedKey, cacheKey, forgetCachedKeys, keyRefused, rememberRefusedKey } from "./key-cache";
import { keyRecognition } from "./recognition";
import { validateRequestedScopes } from "./scopes";

/** The caller behind a valid API key: its organisation, key id, granted scopes and whether it is a test key. */
export interface ApiKeyPrincipal {
  orgId: string;
  apiKeyId: string;
  scopes: string[];
  isTest: boolean;
  /**
   * The organisation's sliding-window limits in requests per minute (docs/api-contract.md §8): plan default or operator
   * override.
   */
  rateLimit: { perKey: number; perOrg: number };
}

/** A key as listed to its owner: never the raw key nor its hash. */
export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  isTest: boolean;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** When the key stops authenticating (the old key of a rotation); null = until revoked. */
  expiresAt: Date | null;
  /**
   * The member who created it; null for the operator command's and start-up's keys (or a deleted user). The key
   * belongs to the organisation: it keeps working when its creator leaves, until someone revokes it.
   */
  createdBy: { id: string; email: string; name: string } | null;
  /** The OAuth client whose connection this key backs (docs/api-contract.md §10.6); null for a key made as a key. */
  oauthClientId: string | null;
  /**
   * An organisation service key (docs/api-contract.md §11.5): it outlives its creator's removal or deprovisioning,
   * for integrations that must not stop when a person leaves.
   */
  serviceKey: boolean;
}

/** Who makes a key change from the settings: the key's creator and, to record it, the audit entry's actor. */
export interface KeyChangeBy {
  /** The member recorded as the new key's creator; null for the operator command. */
  createdById: string | null;
  actor?: AuditActor;
}

/** A key in the audit trail's words: `live key "PSA sync" (msp_live_AbCd…)`. */
export function describeKey(key: Pick<ApiKeySummary, "isTest" | "name" | "prefix">): string {
  return `${key.isTest ? "test" : "live"} key "${key.name}" (${key.prefix}…)`;
}

/**
 * Creates an API key in an organisation (docs/api-contract.md §5), in the current format (§5.2: its checksum keyed with
 * the service's secret). The raw key is returned once and never stored. With `by`, the key records its creator and
 * (with `by.actor`) the settings audit trail an `apiKey.created` entry, in one transaction. Inside an enclosing
 * transaction, {@link keyRecognition} must have been read before it opened. With `oauthClientId` the key is an OAuth
 * connection's (docs/api-contract.md §10.6): its raw key is to be dropped by the caller, never shown. With `serviceKey`
 * it is an organisation service key, which removing or deprovisioning its creator leaves working (§11.5).
 * @returns `{ key: ApiKeySummary, raw: "msp_live_…" | "msp_test_…" }`
 * @throws ApiError `insufficient_scope` (403) for deprecated scopes that can no longer be granted;
 *         `validation_error` (422) for unknown scopes (see `validateRequestedScopes`).
 */
export async function createApiKey(
  orgId: string,
  input: { name: string; scopes: readonly string[]; isTest: boolean; oauthClientId?: string; serviceKey?: boolean },
  by?: KeyChangeBy,
): Promise<{ key: ApiKeySummary; raw: string }> {
  const scopes = validateRequestedScopes(input.scopes);
  const generated = generateApiKey(input.isTest, (await keyRecognition()).checksumSecret);
  return transaction(async () => {
    const key = await prisma().apiKey.create({
      data: {
        orgId,
        name: input.name,
        scopes,
        isTest: input.isTest,
        keyHash: generated.hash,
        prefix: generated.prefix,
        createdById: by?.createdById ?? null,
        checksumKeyed: true,
        oauthClientId: input.oauthClientId ?? null,
        serviceKey: input.serviceKey ?? false,
      },
      select: summarySelect,
    });
    if (by?.actor) {
      await recordSettingsAudit(orgId, by.actor, {
        action: "apiKey.created",
        target: describeKey(key),
        details: {
          mode: key.isTest ? "test" : "live",
          keyId: key.id,
          scopes: key.scopes.join(" "),
          ...(input.oauthClientId ? { oauthClientId: input.oauthClientId } : {}),
          ...(key.serviceKey ? { serviceKey: true } : {}),
        },
      });
    }
    return { key, raw: generated.raw };
  });
}

const summarySelect = {
  id: true,
  name: true,
  prefix: true,
  isTest: true,
  scopes: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
  expiresAt: true,
  createdBy: { select: { id: true, email: true, name: true } },
  oauthClientId: true,
  serviceKey: true,
} as const;

const lastUsedWrites = new Map<string, number>();
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves the `Authorization` header to the key's principal (docs/api-contract.md §5.1–5.4). Unknown, revoked,
 * expired and malformed keys get the same answer. Only a key that may be valid costs a database lookup
 * (docs/architecture.md, "API keys and the key cache"): a key that fails its checksum (keyed with the service's secret,
 * §5.2), a first-format key that was not usable when this process started, and a key the database refused before in
 * this process are refused from memory. A valid key's record is kept in this process for 10 s (key-cache.ts), so the
 * hot path asks the database once per key every 10 s; a revocation empties every instance's cache within 0.5 s.
 * `lastUsedAt` is refreshed at most once a minute per key, off the response path.
 * @returns the principal.
 * @throws ApiError `unauthorized` (401) when the header is missing, not `Bearer`, or the key is not valid; the database
 *   error when a lookup (or this process's first read of {@link keyRecognition}) fails.
 */
export async function authenticateApiKey(authorization: string | null): Promise<ApiKeyPrincipal> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match?.[1]) {
    throw new ApiError("unauthorized", "Missing API key: send Authorization: Bearer <API_KEY>");
  }
  const raw = match[1];
  // Built only on failure: an Error captures a stack trace, which the hot path should not pay for.
  const invalid = () => new ApiError("unauthorized", "Invalid API key");
  const recognition = await keyRecognition();
  const hash = hashApiKey(raw);
  const now = Date.now();
  // A cached key passed its checksum when it was cached, and its hash is its identity: the keyed checksum (an HMAC,
  // the costlier of the two digests) is paid by the keys the cache does not hold, not by every request.
  const cached = cachedPrincipal(hash, now, invalid);
  if (cached) return cached;
  const parsed = parseApiKey(raw, recognition.checksumSecret);
  if (!parsed) throw invalid();
  if (parsed.legacy && !recognition.legacyKeyHashes.has(hash)) throw invalid();
  return lookUpKey(hash, { keyHash: hash }, () => true, invalid, now);
}

/** What a key's principal is made of. */
const PRINCIPAL_SELECT = {
  id: true,
  orgId: true,
  scopes: true,
  isTest: true,
  revokedAt: true,
  expiresAt: true,
  oauthClientId: true,
  org: { select: { plan: true, rateLimitPerKey: true, rateLimitPerOrg: true } },
} as const;

/** A cached principal under `entry`, or undefined; an expired key's entry is refused. */
function cachedPrincipal(entry: string, now: number, invalid: () => ApiError): ApiKeyPrincipal | undefined {
  const cached = cachedKey<ApiKeyPrincipal>(entry, now);
  if (!cached) return undefined;
  if (cached.expiresAt !== null && cached.expiresAt <= now) throw invalid();
  touchLastUsed(cached.value.apiKeyId);
  return cached.value;
}

/**
 * The one lookup of a key that may be valid: refused from memory when this process refused it before, else read,
 * judged (revoked, expired, or not what `accepted` wants: refused and remembered) and cached under `entry` with its
 * principal (the organisation's plan limits or operator override).
 */
async function lookUpKey(
  entry: string,
  where: { keyHash: string } | { id: string },
  accepted: (key: { oauthClientId: string | null }) => boolean,
  invalid: () => ApiError,
  now: number,
): Promise<ApiKeyPrincipal> {
  if (keyRefused(entry)) throw invalid();
  const key = await prisma().apiKey.findUnique({ where, select: PRINCIPAL_SELECT });
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= now) || !accepted(key)) {
    rememberRefusedKey(entry);
    throw invalid();
  }
  touchLastUsed(key.id);
  const plan = PLAN_LIMITS[key.org.plan];
  const principal: ApiKeyPrincipal = {
    orgId: key.orgId,
    apiKeyId: key.id,
    scopes: key.scopes,
    isTest: key.isTest,
    rateLimit: { perKey: key.org.rateLimitPerKey ?? plan.perKey, perOrg: key.org.rateLimitPerOrg ?? plan.perOrg },
  };
  cacheKey(entry, principal, key.expiresAt?.getTime() ?? null, now);
  return principal;
}

/**
 * Resolves the API key behind an OAuth connection (docs/api-contract.md §10.6) to its principal, as
 * {@link authenticateApiKey} resolves a raw key: the caller has verified an access token naming the key's id. The same
 * cache holds the record under the id (10 s, emptied on every instance within 0.5 s of a revocation), so revoking a
 * connection's key refuses its tokens as fast as a raw key's requests; a key that is not a connection's (no
 * `oauthClientId`) is refused like a revoked one.
 * @returns the principal.
 * @throws ApiError `unauthorized` (401) when the key is unknown, revoked, expired or not a connection's; the database
 *   error when the lookup fails.
 */
export async function authenticateConnectionKey(apiKeyId: string): Promise<ApiKeyPrincipal> {
  const invalid = () => new ApiError("unauthorized", "This connection was revoked: connect the client again");
  const entry = `oauth:${apiKeyId}`;
  const now = Date.now();
  return (
    cachedPrincipal(entry, now, invalid) ??
    lookUpKey(entry, { id: apiKeyId }, (key) => key.oauthClientId !== null, invalid, now)
  );
}

function touchLastUsed(apiKeyId: string): void {
  const now = Date.now();
  if (now - (lastUsedWrites.get(apiKeyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
  lastUsedWrites.set(apiKeyId, now);
  // A failed timestamp refresh must never fail the request it accompanies. Never in a request's transaction, which
  // may be over by the time this runs.
  outsideTransaction(() =>
    prisma().apiKey.update({ where: { id: apiKeyId }, data: { lastUsedAt: new Date(now) } }),
  ).catch(() => lastUsedWrites.delete(apiKeyId));
}

/** Lists an organisation's keys, newest first. */
export function listApiKeys(orgId: string): Promise<ApiKeySummary[]> {
  return prisma().apiKey.findMany({ where: { orgId }, select: summarySelect, orderBy: { createdAt: "desc" } });
}

/**
 * One key of the organisation (the settings check its mode before a change: live keys need more than test keys).
 * @throws ApiError `not_found` (404) when the key does not exist in this organisation.
 */
export async function getApiKey(orgId: string, apiKeyId: string): Promise<ApiKeySummary> {
  const key = await prisma().apiKey.findFirst({ where: { id: apiKeyId, orgId }, select: summarySelect });
  if (!key) throw new ApiError("not_found", `API key ${apiKeyId} not found`);
  return key;
}

/**
 * Revokes a key of the organisation; later requests with it get 401, on every instance within 0.5 s. With `actor`,
 * the settings audit trail gets an `apiKey.revoked` entry in the same transaction.
 * @throws ApiError `not_found` (404) when the key does not exist in this organisation.
 */
export async function revokeApiKey(orgId: string, apiKeyId: string, actor?: AuditActor): Promise<void> {
  await transaction(async () => {
    const key = await prisma().apiKey.findFirst({
      where: { id: apiKeyId, orgId, revokedAt: null },
      select: summarySelect,
    });
    const { count } = await prisma().apiKey.updateMany({
      where: { id: apiKeyId, orgId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0 || !key) throw new ApiError("not_found", `API key ${apiKeyId} not found`);
    if (actor) {
      await recordSettingsAudit(orgId, actor, {
        action: "apiKey.revoked",
        target: describeKey(key),
        details: { mode: key.isTest ? "test" : "live", keyId: key.id },
      });
    }
    await afterCommit(forgetCachedKeys);
  });
}

/**
 * The keys a member created that still work (not revoked, not expired), newest first; not their OAuth connections'
 * keys, which their removal always revokes (docs/api-contract.md §10.6), nor organisation service keys, which outlive
 * their creator's membership (docs/api-contract.md §11.5).
 */
export function activeKeysCreatedBy(orgId: string, userId: string): Promise<ApiKeySummary[]> {
  return prisma().apiKey.findMany({
    where: {
      orgId,
      createdById: userId,
      oauthClientId: null,
      serviceKey: false,
      revokedAt: null,
      OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
    },
    select: summarySelect,
    orderBy: { createdAt: "desc" },
  });
}

/**
 * Revokes every key a member created that still works, each with an `apiKey.revoked` entry naming `reason`, in the
 * enclosing transaction (removing a member with their keys, docs/api-contract.md §5.10).
 * @returns the keys revoked.
 */
export async function revokeKeysCreatedBy(
  orgId: string,
  userId: string,
  actor: AuditActor,
  reason: string,
): Promise<ApiKeySummary[]> {
  return transaction(async () => {
    const keys = await activeKeysCreatedBy(orgId, userId);
    if (keys.length === 0) return keys;
    await prisma().apiKey.updateMany({
      where: { id: { in: keys.map((key) => key.id) } },
      data: { revokedAt: new Date() },
    });
    for (const key of keys) {
      await recordSettingsAudit(orgId, actor, {
        action: "apiKey.revoked",
        target: describeKey(key),
        details: { mode: key.isTest ? "test" : "live", keyId: key.id, reason },
      });
    }
    await afterCommit(forgetCachedKeys);
    return keys;
  });
}
