import { hash } from "node:crypto";
import { prisma, type TransactionClient, transaction } from "../db/transaction";
import { ApiError } from "../errors";
import { log } from "../observability/logger";

/** Header carrying the idempotency key (docs/api-contract.md §8). */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Methods the key is honoured on (docs/api-contract.md §8). Elsewhere the header is ignored. */
export const IDEMPOTENT_METHODS = new Set(["POST", "PATCH", "DELETE"]);
/** Key format of docs/api-contract.md §8. */
const KEY_PATTERN = /^[A-Za-z0-9_-]{1,255}$/;
/** How long a stored response is replayed: 24 hours in ms (docs/api-contract.md §8). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Response headers replayed with the stored body; the facade adds X-Request-Id and the rate-limit headers anew. */
const REPLAYED_HEADERS = ["content-type", "cache-control", "location"];

/** A response as stored for replay: status, the headers in {@link REPLAYED_HEADERS} (lower-case names), body text. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}
/** Expired records are deleted by the request path at most this often per process (ms). */
const PURGE_INTERVAL_MS = 10 * 60 * 1000;

/** Who sent the request and what it asked for; `path` includes the query string. */
export interface IdempotentRequest {
  orgId: string;
  apiKeyId: string;
  key: string;
  method: string;
  path: string;
  body: unknown;
  requestId: string;
}

/**
 * Validates an `Idempotency-Key` header value (docs/api-contract.md §8: 1–255 of `A–Z a–z 0–9 _ -`).
 * @returns the key, or null when the header is absent.
 * @throws ApiError `bad_request` (400) when it is malformed.
 */
export function parseIdempotencyKey(value: string | null): string | null {
  if (value === null) return null;
  if (!KEY_PATTERN.test(value)) {
    throw new ApiError(
      "bad_request",
      "Idempotency-Key must be 1 to 255 characters, each a letter (A-Z, a-z), digit, underscore or hyphen",
    );
  }
  return value;
}

/** JSON with object keys sorted, so the same body sent with its fields in another order has the same fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * SHA-256 hex of method, path with query, and the canonical body: what "the same request" means (docs/api-contract.md
 * §8).
 */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return hash("sha256", `${method} ${path}\n${body === undefined ? "" : canonicalJson(body)}`, "hex");
}

/** Carries a failed operation's response out of the transaction it rolls back. */
class RolledBack<T> {
  constructor(readonly response: T) {}
}

/** `status` of a record whose operation is still running outside a transaction (see {@link runIdempotent}). */
const CLAIMED = 0;
/** How long a claim holds its key when its process dies before storing the answer (ms); an attempt takes ≤ 10 s. */
export const IDEMPOTENCY_CLAIM_MS = 60_000;

/**
 * How an answer that carries a secret is stored (docs/architecture.md, "Idempotency"): never in plaintext outside the
 * secret's own column.
 */
export interface AnswerSeal {
  /** The body to store: the secret replaced by a reference that cannot be turned back into it. */
  seal(body: string): string;
  /**
   * The stored body with the secret read back from its own column, byte for byte the first answer; null when the
   * secret it carried is no longer the current one (rotated since, or its record deleted).
   */
  unseal(orgId: string, body: string): Promise<string | null>;
}

/** How {@link runIdempotent} runs an operation. */
export interface IdempotencyOptions {
  /** The answer carries a secret: store it sealed, and replay it only while the secret stands. */
  seal?: AnswerSeal;
  /**
   * The operation runs its own transactions (a webhook test event or redelivery waits for a receiver; an erasure first
   * stores this process's queued audit rows): run it outside any transaction, between a claim of the key and the
   * stored answer, so no connection is held while it waits and nothing it writes first joins a transaction.
   */
  ownTransactions?: boolean;
}

type StoredRow = NonNullable<Awaited<ReturnType<TransactionClient["idempotencyKey"]["findUnique"]>>>;

function inProgress(): ApiError {
  return new ApiError(
    "idempotency_in_progress",
    "A request with this Idempotency-Key is still being processed; retry after it completes to get its response",
    { headers: { "Retry-After": "1" } },
  );
}

/** Takes the key's transaction-scoped advisory lock, or refuses a duplicate that arrives while it is held. */
async function lockKey(tx: TransactionClient, request: IdempotentRequest): Promise<void> {
  const [lock] = await tx.$queryRaw<Array<{ locked: boolean }>>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${`${request.orgId}:${request.apiKeyId}:${request.key}`}, 0)) AS locked`;
  if (!lock?.locked) throw inProgress();
}

/** The stored answer of a live record of the key, replayed; undefined when the key is free (none, or expired). */
async function replayOf(
  stored: StoredRow | null,
  request: IdempotentRequest,
  fingerprint: string,
  options: IdempotencyOptions,
): Promise<(StoredResponse & { replayOf: string }) | undefined> {
  if (!stored || stored.expiresAt.getTime() <= Date.now()) return undefined;
  if (stored.status === CLAIMED) throw inProgress();
  if (stored.fingerprint !== fingerprint) {
    throw new ApiError(
      "idempotency_conflict",
      `Idempotency-Key was already used for a different request (${stored.method} ${stored.path} with another body) within 24 hours; use a new key`,
    );
  }
  const body = options.seal ? await options.seal.unseal(request.orgId, stored.responseBody) : stored.responseBody;
  if (body === null) {
    throw new ApiError(
      "idempotency_conflict",
      "The answer stored for this Idempotency-Key carried a webhook signing secret that has been rotated since (or its endpoint deleted), so it is not replayed: list the webhook endpoints and rotate the secret with a new key to get a current one",
    );
  }
  return {
    status: stored.status,
    headers: stored.responseHeaders as Record<string, string>,
    body,
    replayOf: stored.requestId,
  };
}

/** The columns that store an answer: status, replayed headers, body (sealed when it carries a secret), 24 hours. */
function answerRecord(response: StoredResponse, options: IdempotencyOptions) {
  const body = response.body ?? "";
  return {
    status: response.status,
    responseBody: options.seal ? options.seal.seal(body) : body,
    responseHeaders: Object.fromEntries(
      Object.entries(response.headers)
        .map(([name, value]) => [name.toLowerCase(), value] as const)
        .filter(([name]) => REPLAYED_HEADERS.includes(name)),
    ),
    expiresAt: new Date(Date.now() + IDEMPOTENCY_RETENTION_MS),
  };
}

/**
 * Runs `execute` at most once per `(orgId, apiKeyId, key)` within 24 hours (docs/api-contract.md §8,
 * docs/architecture.md, "Idempotency"). The operation and its idempotency record share one transaction, so either both
 * commit or neither does; an `ownTransactions` operation runs outside any transaction instead, between a claim of the key
 * (status 0, held {@link IDEMPOTENCY_CLAIM_MS}) and its stored answer, so it never holds a connection while it waits
 * for a receiver (the embedded database's pool has one).
 * - Same key and same request → the stored status, headers and body with `replayOf` = the first request's id, without
 *   running again (a sealed secret read back from its own column).
 * - Same key, different method, path or body, or a stored secret rotated since → 422 `idempotency_conflict`.
 * - Same key while the first request is still running → 409 `idempotency_in_progress` with `Retry-After: 1`
 *   (a transaction-scoped advisory lock, or the claim, decides; the second request never waits for or runs the
 *   operation).
 * - A response with status ≥ 400 rolls the transaction back (or releases the claim) and is not stored, so the request
 *   can be retried.
 * @returns the response of `execute`, or the stored one with `replayOf`.
 * @throws ApiError as listed above; errors from `execute` propagate after rollback.
 */
export async function runIdempotent<T extends StoredResponse>(
  request: IdempotentRequest,
  execute: () => Promise<T>,
  options: IdempotencyOptions = {},
): Promise<T | (StoredResponse & { replayOf: string })> {
  purgeOccasionally();
  if (options.ownTransactions) return runClaimed(request, execute, options);
  const fingerprint = requestFingerprint(request.method, request.path, request.body);
  const where = { orgId_apiKeyId_key: { orgId: request.orgId, apiKeyId: request.apiKeyId, key: request.key } };
  try {
    return await transaction(async (tx) => {
      await lockKey(tx, request);
      const replay = await replayOf(await tx.idempotencyKey.findUnique({ where }), request, fingerprint, options);
      if (replay) return replay;
      const response = await execute();
      if (response.status >= 400) throw new RolledBack(response);
      const record = {
        method: request.method,
        path: request.path,
        fingerprint,
        ...answerRecord(response, options),
        requestId: request.requestId,
        createdAt: new Date(),
      };
      // An expired record with the same key is replaced: the key is free again after 24 hours.
      await tx.idempotencyKey.upsert({ where, create: { ...where.orgId_apiKeyId_key, ...record }, update: record });
      return response;
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.response as T;
    throw error;
  }
}

async function runClaimed<T extends StoredResponse>(
  request: IdempotentRequest,
  execute: () => Promise<T>,
  options: IdempotencyOptions,
): Promise<T | (StoredResponse & { replayOf: string })> {
  const fingerprint = requestFingerprint(request.method, request.path, request.body);
  const scope = { orgId: request.orgId, apiKeyId: request.apiKeyId, key: request.key };
  const where = { orgId_apiKeyId_key: scope };
  const replay = await transaction(async (tx) => {
    await lockKey(tx, request);
    const found = await replayOf(await tx.idempotencyKey.findUnique({ where }), request, fingerprint, options);
    if (found) return found;
    const claim = {
      method: request.method,
      path: request.path,
      fingerprint,
      status: CLAIMED,
      responseBody: "",
      responseHeaders: {},
      requestId: request.requestId,
      createdAt: new Date(),
      expiresAt: new Date(Date.now() + IDEMPOTENCY_CLAIM_MS),
    };
    await tx.idempotencyKey.upsert({ where, create: { ...scope, ...claim }, update: claim });
    return undefined;
  });
  if (replay) return replay;
  // Only this request's claim is settled: one that outlived its time may belong to a later request now.
  const mine = { ...scope, requestId: request.requestId };
  // A claim that cannot be released (the database is down) frees its key when it expires.
  const release = () =>
    prisma()
      .idempotencyKey.deleteMany({ where: mine })
      .catch((error: unknown) => log().warn({ err: error }, "idempotency claim not released; it expires by itself"));
  let response: T;
  try {
    response = await execute();
  } catch (error) {
    await release();
    throw error;
  }
  if (response.status >= 400) await release();
  else await prisma().idempotencyKey.updateMany({ where: mine, data: answerRecord(response, options) });
  return response;
}

/**
 * Deletes idempotency records whose 24 hours are over.
 * @returns the number of records deleted.
 */
export async function purgeExpiredIdempotencyKeys(now = new Date()): Promise<number> {
  const { count } = await prisma().idempotencyKey.deleteMany({ where: { expiresAt: { lte: now } } });
  return count;
}

let lastPurge = 0;

function purgeOccasionally(): void {
  const now = Date.now();
  if (now - lastPurge < PURGE_INTERVAL_MS) return;
  lastPurge = now;
  // Off the response path; a failed purge is retried at the next interval and never fails a request.
  purgeExpiredIdempotencyKeys().catch((error: unknown) => {
    log().warn({ err: error }, "idempotency purge failed; retried at the next interval");
  });
}
