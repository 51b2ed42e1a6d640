import type { Prisma, RateLimitPlan } from "../../db/generated/client";
import { containsInsensitive } from "../../db/like";
import { prisma } from "../../db/transaction";
import { ApiError } from "../../errors";
import { listPage } from "../../records/pagination";
import { PLAN_LIMITS } from "../organisations";
import type { AuditEntry } from "./record";
import { statusRange, type UsageFilters } from "./usage-rollup";

/**
 * One audited API call as the usage page shows it (docs/api-contract.md §1 "every call is audit-logged"): the stored
 * {@link AuditEntry} without organisation, IP and user agent, plus the row's `id` as a decimal string (BIGSERIAL).
 * `durationMs` is the time to answer in ms.
 */
export type AuditLogEntry = Omit<AuditEntry, "orgId" | "ip" | "userAgent"> & { id: string };

/** Filters, range and page of {@link listAuditLog} (docs/api-contract.md §1.2). */
export interface AuditLogQuery extends UsageFilters {
  /** Only calls answered at or after this time. */
  from?: Date;
  /** Only calls answered before this time. */
  to?: Date;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** Page size, 1–100, default 50 (the export reads pages of 1,000). */
  limit?: number;
}

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

/** Most rows of one page: the export's page size; the settings router allows 100. */
const MAX_PAGE = 1_000;

function auditWhere(orgId: string, query: AuditLogQuery): Prisma.AuditLogWhereInput {
  const where: Prisma.AuditLogWhereInput = { orgId };
  if (query.apiKeyId) where.apiKeyId = query.apiKeyId;
  if (query.method) where.method = query.method.toUpperCase();
  if (query.path?.trim()) where.path = containsInsensitive(query.path.trim());
  if (query.status) {
    const [low, high] = statusRange(query.status);
    where.status = { gte: low, lt: high };
  }
  if (query.from || query.to) where.createdAt = { gte: query.from, lt: query.to };
  return where;
}

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
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new ApiError("validation_error", `limit must be an integer from 1 to ${MAX_PAGE}`);
  }
  return listPage({
    query: { limit, cursor: query.cursor },
    fields: { createdAt: { nullable: false } },
    defaultSort: [{ field: "createdAt", direction: "desc" }],
    filters: [auditWhere(orgId, query)],
    findCursor: async (cursor) =>
      /^\d{1,19}$/.test(cursor)
        ? prisma().auditLog.findFirst({ where: { orgId, id: BigInt(cursor) }, select: auditSelect })
        : null,
    findMany: (args) => prisma().auditLog.findMany({ ...(args as Prisma.AuditLogFindManyArgs), select: auditSelect }),
    map: (row) => ({ ...row, id: row.id.toString() }),
  });
}

/**
 * Every row of the audit log matching `query`, newest first, read one keyset page (of `pageSize` rows, default 1,000)
 * at a time over `(createdAt, id)` (the `(orgId, createdAt)` index) as the consumer asks for more: memory holds one
 * page whatever the number of rows, and a consumer that stops (`return()`, a `for await` left early) stops the
 * reading. `read` runs each page's statement (the export paces and charges it). One statement a page, read as plain rows: the model query of {@link listAuditLog} (a cursor look-up, then the page) cost 26 µs of
 * this thread a row and 100 ms a page, where an export of 200,000 rows is now 2.6 s in all (docs/architecture.md,
 * "Budgets: what one request may cost").
 * @throws ApiError `validation_error` (422) for a malformed status filter.
 */
export async function* auditLogPages(
  orgId: string,
  query: Omit<AuditLogQuery, "cursor" | "limit">,
  options: { pageSize?: number; read?: <T>(statement: () => Promise<T>) => Promise<T> } = {},
) {
  const pageSize = options.pageSize ?? MAX_PAGE;
  const read = options.read ?? ((statement) => statement());
  const values: unknown[] = [orgId];
  const add = (value: unknown) => `$${values.push(value)}`;
  const where = [`"orgId" = $1`];
  if (query.apiKeyId) where.push(`"apiKeyId" = ${add(query.apiKeyId)}`);
  if (query.method) where.push(`"method" = ${add(query.method.toUpperCase())}`);
  if (query.path?.trim()) where.push(`strpos(lower("path"), lower(${add(query.path.trim())}::text)) > 0`);
  if (query.status) {
    const [low, high] = statusRange(query.status);
    where.push(`"status" >= ${low} AND "status" < ${high}`);
  }
  if (query.from) where.push(`"createdAt" >= ${add(query.from)}`);
  if (query.to) where.push(`"createdAt" < ${add(query.to)}`);
  const columns = Object.keys(auditSelect)
    .map((column) => `"${column}"`)
    .join(", ");
  let after: [Date, bigint] | null = null;
  for (;;) {
    const keyset: string[] = after ? [`("createdAt", "id") < ($${values.length + 1}, $${values.length + 2})`] : [];
    const rows: Array<Omit<AuditLogEntry, "id"> & { id: bigint }> = await read(() =>
      prisma().$queryRawUnsafe<Array<Omit<AuditLogEntry, "id"> & { id: bigint }>>(
        `SELECT ${columns} FROM "AuditLog" WHERE ${[...where, ...keyset].join(" AND ")}
          ORDER BY "createdAt" DESC, "id" DESC LIMIT ${pageSize}`,
        ...values,
        ...(after ?? []),
      ),
    );
    yield rows.map((row) => ({ ...row, id: row.id.toString() }));
    const last: { createdAt: Date; id: bigint } | undefined = rows.at(-1);
    if (rows.length < pageSize || !last) return;
    after = [last.createdAt, last.id];
  }
}

/**
 * One audited call of the organisation by its row id (the request's detail on the usage page).
 * @throws ApiError `not_found` (404) when the id names no row of the organisation's log.
 */
export async function getAuditEntry(orgId: string, id: string): Promise<AuditLogEntry> {
  const row = /^\d{1,19}$/.test(id)
    ? await prisma().auditLog.findFirst({ where: { orgId, id: BigInt(id) }, select: auditSelect })
    : null;
  if (!row) throw new ApiError("not_found", `Request ${id} not found`);
  return { ...row, id: row.id.toString() };
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
