import type { Prisma, RateLimitPlan } from "../db/generated/client";
import { containsInsensitive } from "../db/like";
import { prisma } from "../db/transaction";
import { ApiError } from "../errors";
import type { AuditEntry } from "./audit";
import { PLAN_LIMITS } from "./organisations";
import { listPage } from "./pagination";

/**
 * One audited API call as the usage page shows it (docs/api-contract.md §1 "every call is audit-logged"): the stored
 * {@link AuditEntry} without organisation, IP and user agent, plus the row's `id` as a decimal string (BIGSERIAL).
 * `durationMs` is the time to answer in ms.
 */
export type AuditLogEntry = Omit<AuditEntry, "orgId" | "ip" | "userAgent"> & { id: string };

/** Filters and page of {@link listAuditLog}. */
export interface AuditLogQuery {
  /** Only calls made with this key (an id from the organisation's keys). */
  apiKeyId?: string;
  /** Exact status (`"429"`) or class (`"4xx"`). */
  status?: string;
  /** Only paths containing this text, case-insensitive (e.g. `/accounts`). */
  path?: string;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** Page size, 1–100, default 50. */
  limit?: number;
}

const STATUS_PATTERN = /^(?:([1-5])xx|([1-5]\d\d))$/;

const auditSelect = {
  id: true,
  method: true,
  path: true,
  query: true,
  status: true,
  errorCode: true,
  durationMs: true,
  requestId: true,
  apiKeyId: true,
  isTest: true,
  createdAt: true,
} satisfies Prisma.AuditLogSelect;

/**
 * The organisation's audit log, newest first, one keyset page at a time over `(createdAt, id)` (the `(orgId,
 * createdAt)` index) with the list helper every list uses, so a late page costs what the first one does. Rows are
 * written in batches up to 250 ms after each call.
 * @returns `{ data: AuditLogEntry[], hasMore, nextCursor }`: pass `nextCursor` as `cursor` while `hasMore`.
 * @throws ApiError `validation_error` (422) for a malformed status filter or limit; `bad_request` (400) for a
 *         cursor that names no row of the organisation's log.
 */
export function listAuditLog(
  orgId: string,
  query: AuditLogQuery = {},
): Promise<{ data: AuditLogEntry[]; hasMore: boolean; nextCursor: string | null }> {
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new ApiError("validation_error", "limit must be an integer from 1 to 100");
  }
  const where: Prisma.AuditLogWhereInput = { orgId };
  if (query.apiKeyId) where.apiKeyId = query.apiKeyId;
  if (query.path?.trim()) where.path = containsInsensitive(query.path.trim());
  if (query.status) {
    const match = STATUS_PATTERN.exec(query.status.trim());
    if (!match)
      throw new ApiError("validation_error", "status must be an HTTP status such as 404 or a class such as 4xx");
    if (match[1]) {
      const base = Number(match[1]) * 100;
      where.status = { gte: base, lt: base + 100 };
    } else {
      where.status = Number(match[2]);
    }
  }
  return listPage({
    query: { limit, cursor: query.cursor },
    fields: { createdAt: { nullable: false } },
    defaultSort: [{ field: "createdAt", direction: "desc" }],
    filters: [where],
    findCursor: async (cursor) =>
      /^\d{1,19}$/.test(cursor)
        ? prisma().auditLog.findFirst({ where: { orgId, id: BigInt(cursor) }, select: auditSelect })
        : null,
    findMany: (args) => prisma().auditLog.findMany({ ...(args as Prisma.AuditLogFindManyArgs), select: auditSelect }),
    map: (row) => ({ ...row, id: row.id.toString() }),
  });
}

/** The organisation's rate-limit plan and the limits in force (docs/api-contract.md §8), requests per minute. */
export interface RateLimitSummary {
  plan: RateLimitPlan;
  /** Window per key in force: the operator override, else the plan's. */
  perKey: number;
  /** Organisation-wide window in force. */
  perOrg: number;
  /** The plan's defaults, to show next to an override. */
  planDefaults: { perKey: number; perOrg: number };
  /** Whether an operator override replaces the plan's per-key / organisation-wide window. */
  overridden: { perKey: boolean; perOrg: boolean };
}

/**
 * The rate-limit plan and limits of an organisation (docs/api-contract.md §8: `PLAN_LIMITS` and the organisation's
 * overrides).
 * @throws ApiError `not_found` (404) when the organisation does not exist.
 */
export async function getRateLimitSummary(orgId: string): Promise<RateLimitSummary> {
  const org = await prisma().organisation.findUnique({
    where: { id: orgId },
    select: { plan: true, rateLimitPerKey: true, rateLimitPerOrg: true },
  });
  if (!org) throw new ApiError("not_found", `Organisation ${orgId} not found`);
  const planDefaults = PLAN_LIMITS[org.plan];
  return {
    plan: org.plan,
    perKey: org.rateLimitPerKey ?? planDefaults.perKey,
    perOrg: org.rateLimitPerOrg ?? planDefaults.perOrg,
    planDefaults,
    overridden: { perKey: org.rateLimitPerKey !== null, perOrg: org.rateLimitPerOrg !== null },
  };
}

/** Counts of the organisation's API calls since a time, for the overview page. */
export async function countCallsSince(orgId: string, since: Date): Promise<{ total: number; errors: number }> {
  const [total, errors] = await Promise.all([
    prisma().auditLog.count({ where: { orgId, createdAt: { gte: since } } }),
    prisma().auditLog.count({ where: { orgId, createdAt: { gte: since }, status: { gte: 400 } } }),
  ]);
  return { total, errors };
}
