// The usage figures (docs/architecture.md, "Usage: the roll-up, the chart and the export"): requests per bucket by status
// class, p95 latency and top errors, read from the roll-up where it is current and from the audit log where it is not.

import { INSTANT_RANGE } from "../../contract/common";
import { escapeLike } from "../../db/like";
import { prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import {
  defaultGranularity,
  GRANULARITIES,
  type Granularity,
  LATENCY_BANDS_MS,
  type StatusClassCounts,
  USAGE_MAX_BUCKETS,
  USAGE_MAX_RANGE_MS,
  type UsageSeries,
} from "./schema";

/** Width of a roll-up slot, seconds: the finest granularity. */
const SLOT_SECONDS = GRANULARITIES["30m"];
/** Widths rolled up from the slots. */
const PARENT_WIDTHS = [GRANULARITIES["3h"], GRANULARITIES["12h"]];
/** A slot is rolled up once it ended this long ago, so the audit batches of its last moments are in (250 ms). */
const CLOSE_GRACE_MS = 60_000;
/** Slots rolled up per transaction. */
const SLOTS_PER_RUN = 200;

const BANDS = LATENCY_BANDS_MS.length + 1;
const EPOCH = "TIMESTAMP '1970-01-01'";

/** `ARRAY[count(*) FILTER (…band 1…), …]`: the latency histogram of a group of audit rows. */
const HISTOGRAM_OF_ROWS = `ARRAY[${Array.from({ length: BANDS }, (_, band) => {
  const low = band === 0 ? null : LATENCY_BANDS_MS[band - 1];
  const high = LATENCY_BANDS_MS[band];
  const conditions = [
    low === null ? null : `a."durationMs" > ${low}`,
    high === undefined ? null : `a."durationMs" <= ${high}`,
  ];
  return `count(*) FILTER (WHERE ${conditions.filter(Boolean).join(" AND ")})`;
}).join(", ")}]::int[]`;

const ROLLUP_COLUMNS = `("orgId", "widthSeconds", "start", "apiKeyId", "method", "status", "errorCode", "requests",
  "durationMsSum", "durationMsMax", "latencyHistogram")`;

/** `ARRAY[sum(r."latencyHistogram"[1]), …]`: the histogram of a group of roll-up rows. */
const HISTOGRAM_OF_ROLLUPS = `ARRAY[${Array.from({ length: BANDS }, (_, band) => `sum(r."latencyHistogram"[${band + 1}])`).join(", ")}]::int[]`;

/** The filters of the usage figures, the log and the export (docs/api-contract.md §4.19). */
export interface UsageFilters {
  /** Only calls made with this key. */
  apiKeyId?: string;
  /** Exact status (`"429"`) or class (`"4xx"`). */
  status?: string;
  /** Only this HTTP method. */
  method?: string;
  /** Only paths containing this text, case-insensitively. */
  path?: string;
}

const STATUS_PATTERN = /^(?:([1-5])xx|([1-5]\d\d))$/;

/**
 * A status filter as a range of statuses, `[low, high)`.
 * @throws ApiError `validation_error` (422) unless it is a status such as `404` or a class such as `4xx`.
 */
export function statusRange(status: string): [number, number] {
  const match = STATUS_PATTERN.exec(status.trim());
  if (!match)
    throw new ApiError("validation_error", "status must be an HTTP status such as 404 or a class such as 4xx");
  if (match[1]) return [Number(match[1]) * 100, Number(match[1]) * 100 + 100];
  return [Number(match[2]), Number(match[2]) + 1];
}

/** A range of whole buckets: `from` and `to` aligned to the granularity. */
export interface UsageRange {
  from: Date;
  to: Date;
  granularity: Granularity;
}

const FIRST_INSTANT_MS = Date.parse(INSTANT_RANGE.min);
const LAST_INSTANT_MS = Date.parse(INSTANT_RANGE.max);

/**
 * A requested range as it stands, not aligned (what the CSV export covers): `to` defaults to now and `from` to 24 hours
 * before `to`, but not before 0001-01-01T00:00:00Z (docs/api-contract.md §2.2).
 * @throws ApiError `validation_error` (422) when either is not a timestamp, `from` is not before `to` or the range
 *         exceeds 90 days.
 */
export function requestedUsageRange(
  input: { from?: string | Date; to?: string | Date },
  now = new Date(),
): { from: Date; to: Date } {
  const to = input.to ? new Date(input.to) : now;
  const from = input.from
    ? new Date(input.from)
    : new Date(Math.max(to.getTime() - 24 * 60 * 60 * 1000, FIRST_INSTANT_MS));
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
    throw new ApiError("validation_error", "from and to must be ISO 8601 timestamps");
  if (from >= to) throw new ApiError("validation_error", "from must be before to");
  if (to.getTime() - from.getTime() > USAGE_MAX_RANGE_MS)
    throw new ApiError("validation_error", "The range is longer than 90 days: choose a shorter one");
  return { from, to };
}

/**
 * Aligns a requested range ({@link requestedUsageRange}) to whole buckets (docs/api-contract.md §4.19): `from` rounded
 * down and `to` rounded up to the granularity (default by the range's length).
 * @throws ApiError `validation_error` (422) as {@link requestedUsageRange}, and when the range would hold more than
 *         1,000 buckets, or its last bucket would end after 9999-12-31T23:59:59.999Z (naming `to`).
 */
export function usageRange(
  input: { from?: string | Date; to?: string | Date; granularity?: Granularity },
  now = new Date(),
): UsageRange {
  const { from, to } = requestedUsageRange(input, now);
  const granularity = input.granularity ?? defaultGranularity(to.getTime() - from.getTime());
  const width = GRANULARITIES[granularity] * 1000;
  const aligned = {
    from: new Date(Math.floor(from.getTime() / width) * width),
    to: new Date(Math.ceil(to.getTime() / width) * width),
    granularity,
  };
  // Bucket bounds are answered as timestamps, which stop at year 9999 (the epoch aligns the first instant of year 1).
  if (aligned.to.getTime() > LAST_INSTANT_MS) {
    const message = `must leave the last ${granularity} bucket ending by ${INSTANT_RANGE.max}`;
    throw new ApiError("validation_error", `to ${message}`, { details: [{ path: ["to"], message }] });
  }
  if ((aligned.to.getTime() - aligned.from.getTime()) / width > USAGE_MAX_BUCKETS)
    throw new ApiError(
      "validation_error",
      `The range holds more than ${USAGE_MAX_BUCKETS} buckets of ${granularity}: choose a coarser granularity`,
    );
  return aligned;
}

interface GroupRow {
  bucket: Date;
  status: number;
  errorCode: string | null;
  requests: bigint | number;
  durationMsMax: number;
  histogram: number[];
}

/** Filters on the columns the roll-up keeps, as SQL over alias `r` with parameters from `$first`. */
function dimensionFilters(filters: UsageFilters, first: number): { sql: string; values: unknown[] } {
  const clauses: string[] = [];
  const values: unknown[] = [];
  if (filters.apiKeyId) {
    values.push(filters.apiKeyId);
    clauses.push(`r."apiKeyId" = $${first + values.length - 1}`);
  }
  if (filters.method) {
    values.push(filters.method.toUpperCase());
    clauses.push(`r."method" = $${first + values.length - 1}`);
  }
  if (filters.status) {
    const [low, high] = statusRange(filters.status);
    clauses.push(`r."status" >= ${low} AND r."status" < ${high}`);
  }
  return { sql: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "", values };
}

// Each slot's rows are read by a LATERAL subquery (OFFSET 0 keeps PostgreSQL from flattening it), so the
// (orgId, createdAt) index is scanned once per slot: a plain join was planned as a hash join on orgId filtering every
// row of the organisation (23 s for 200 slots of 1,000,000 rows, against 0.2 s).
// The rows of a range, one per bucket, status and error code. Buckets without a pending slot come from the roll-up
// row of their width; a bucket holding pending slots from the rolled-up slots it has plus the audit rows of its
// pending slots. The one statement sees one snapshot, and a slot's roll-up and the removal of its mark commit
// together, so no request is counted twice or missed.
const FROM_ROLLUP = `
WITH pending AS (
  SELECT "slot" FROM "UsagePendingSlot" WHERE "orgId" = $1 AND "slot" >= $2::timestamp AND "slot" < $3::timestamp
), dirty AS (
  SELECT DISTINCT date_bin(make_interval(secs => $4::int), "slot", ${EPOCH}) AS "bucket" FROM pending
), parts AS (
  SELECT r."start" AS "bucket", r."apiKeyId", r."method", r."status", r."errorCode", r."requests", r."durationMsMax",
    r."latencyHistogram"
  FROM "UsageRollup" r
  WHERE r."orgId" = $1 AND r."widthSeconds" = $4::int AND r."start" >= $2::timestamp AND r."start" < $3::timestamp
    AND r."start" NOT IN (SELECT "bucket" FROM dirty)
  UNION ALL
  SELECT d."bucket", r."apiKeyId", r."method", r."status", r."errorCode", r."requests", r."durationMsMax",
    r."latencyHistogram"
  FROM dirty d
  CROSS JOIN LATERAL (
    SELECT * FROM "UsageRollup" r
    WHERE $4::int <> ${SLOT_SECONDS} AND r."orgId" = $1 AND r."widthSeconds" = ${SLOT_SECONDS}
      AND r."start" >= d."bucket" AND r."start" < d."bucket" + make_interval(secs => $4::int)
      AND r."start" NOT IN (SELECT "slot" FROM pending) OFFSET 0
  ) r
  UNION ALL
  SELECT date_bin(make_interval(secs => $4::int), p."slot", ${EPOCH}), a."apiKeyId", a."method", a."status", a."errorCode",
    count(*)::int, max(a."durationMs"), ${HISTOGRAM_OF_ROWS}
  FROM pending p
  CROSS JOIN LATERAL (
    SELECT * FROM "AuditLog" a
    WHERE a."orgId" = $1 AND a."createdAt" >= p."slot" AND a."createdAt" < p."slot" + INTERVAL '30 minutes' OFFSET 0
  ) a
  GROUP BY p."slot", a."apiKeyId", a."method", a."status", a."errorCode"
)
SELECT r."bucket", r."status", r."errorCode", sum(r."requests") AS "requests", max(r."durationMsMax") AS "durationMsMax",
  ${HISTOGRAM_OF_ROLLUPS} AS "histogram"
FROM parts r
`;

// With a path filter the roll-up cannot answer (it keeps no paths): the audit rows of the range, filtered.
const FROM_AUDIT_LOG = `
SELECT date_bin(make_interval(secs => $4::int), a."createdAt", ${EPOCH}) AS "bucket", a."status", a."errorCode",
  count(*) AS "requests", max(a."durationMs") AS "durationMsMax", ${HISTOGRAM_OF_ROWS} AS "histogram"
FROM "AuditLog" a
WHERE a."orgId" = $1 AND a."createdAt" >= $2::timestamp AND a."createdAt" < $3::timestamp AND a."path" ILIKE $5
`;

function emptyClasses(): StatusClassCounts {
  return { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0 };
}

function classOf(status: number): keyof StatusClassCounts | null {
  const key = `${Math.floor(status / 100)}xx`;
  return key in emptyClasses() ? (key as keyof StatusClassCounts) : null;
}

/** The 95th percentile of a histogram: its band's upper bound, or the slowest request when lower; null when empty. */
function p95(histogram: number[], max: number): number | null {
  const total = histogram.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.ceil(total * 0.95);
  let seen = 0;
  for (let band = 0; band < histogram.length; band++) {
    seen += histogram[band] ?? 0;
    if (seen >= rank) return Math.min(LATENCY_BANDS_MS[band] ?? max, max);
  }
  return max;
}

/**
 * The usage figures of an organisation for a range of whole buckets (docs/api-contract.md §4.19): every bucket with
 * its requests by status class and p95 latency, the totals and the five most frequent error answers. Without a path
 * filter they come from the roll-up (cost follows the number of buckets, not of requests); with one, from the audit
 * rows of the range.
 * @throws ApiError `validation_error` (422) for a malformed status filter.
 */
export async function usageSeries(orgId: string, range: UsageRange, filters: UsageFilters = {}): Promise<UsageSeries> {
  const width = GRANULARITIES[range.granularity];
  const base = [orgId, range.from.toISOString(), range.to.toISOString(), width];
  const path = filters.path?.trim();
  const dims = dimensionFilters(filters, base.length + (path ? 2 : 1));
  const sql = path
    ? `${FROM_AUDIT_LOG} ${dims.sql.replace("WHERE", "AND").replaceAll('r."', 'a."')} GROUP BY 1, 2, 3`
    : `${FROM_ROLLUP} ${dims.sql} GROUP BY 1, 2, 3`;
  const values = path ? [...base, `%${escapeLike(path)}%`, ...dims.values] : [...base, ...dims.values];
  const rows = await prisma().$queryRawUnsafe<GroupRow[]>(sql, ...values);

  const buckets = new Map<number, { classes: StatusClassCounts; histogram: number[]; max: number }>();
  for (let at = range.from.getTime(); at < range.to.getTime(); at += width * 1000) {
    buckets.set(at, { classes: emptyClasses(), histogram: new Array(BANDS).fill(0), max: 0 });
  }
  const totals = { classes: emptyClasses(), histogram: new Array<number>(BANDS).fill(0), max: 0 };
  const errors = new Map<string, { status: number; errorCode: string | null; requests: number }>();
  for (const row of rows) {
    const bucket = buckets.get(row.bucket.getTime());
    const requests = Number(row.requests);
    const cls = classOf(row.status);
    if (!bucket || !cls) continue;
    for (const target of [bucket, totals]) {
      target.classes[cls] += requests;
      row.histogram.forEach((n, band) => {
        target.histogram[band] = (target.histogram[band] ?? 0) + Number(n);
      });
      target.max = Math.max(target.max, row.durationMsMax);
    }
    if (row.status >= 400) {
      const key = `${row.status} ${row.errorCode ?? ""}`;
      const entry = errors.get(key) ?? { status: row.status, errorCode: row.errorCode, requests: 0 };
      entry.requests += requests;
      errors.set(key, entry);
    }
  }
  const sum = (classes: StatusClassCounts) => Object.values(classes).reduce((a, b) => a + b, 0);
  return {
    from: range.from.toISOString(),
    to: range.to.toISOString(),
    granularity: range.granularity,
    totals: { requests: sum(totals.classes), byStatusClass: totals.classes, p95Ms: p95(totals.histogram, totals.max) },
    topErrors: [...errors.values()]
      .sort(
        (a, b) =>
          b.requests - a.requests || a.status - b.status || (a.errorCode ?? "").localeCompare(b.errorCode ?? ""),
      )
      .slice(0, 5),
    buckets: [...buckets].map(([start, bucket]) => ({
      start: new Date(start).toISOString(),
      end: new Date(start + width * 1000).toISOString(),
      requests: sum(bucket.classes),
      byStatusClass: bucket.classes,
      p95Ms: p95(bucket.histogram, bucket.max),
    })),
  };
}

/**
 * Rolls up the organisations' closed 30-minute slots whose audit rows changed (docs/architecture.md, "Usage: the
 * roll-up, the chart and the export"): for each pending slot that ended at least a minute before `now`, rewrites its
 * roll-up rows from the audit log and the 3- and 12-hour rows that contain it from the slots, and removes its mark, in
 * one transaction per 200 slots (the marks locked, skipping those another run holds). Rows that arrive later mark the
 * slot again, and a later run rolls it up anew.
 * @returns how many slots it rolled up.
 */
export async function rollUpUsage(now = new Date()): Promise<{ slots: number }> {
  const closedBefore = new Date(now.getTime() - SLOT_SECONDS * 1000 - CLOSE_GRACE_MS).toISOString();
  let slots = 0;
  for (;;) {
    const done = await transaction(async (tx) => {
      const marks = await tx.$queryRawUnsafe<Array<{ orgId: string; slot: Date }>>(
        `SELECT "orgId", "slot" FROM "UsagePendingSlot" WHERE "slot" <= $1::timestamp
         ORDER BY "orgId", "slot" LIMIT ${SLOTS_PER_RUN} FOR UPDATE SKIP LOCKED`,
        closedBefore,
      );
      if (marks.length === 0) return 0;
      const list = JSON.stringify(marks.map((mark) => ({ orgId: mark.orgId, slot: mark.slot.toISOString() })));
      const marked = `SELECT * FROM jsonb_to_recordset($1::jsonb) AS s("orgId" text, "slot" timestamp)`;
      await tx.$executeRawUnsafe(
        `DELETE FROM "UsageRollup" r USING (${marked}) s
         WHERE r."orgId" = s."orgId" AND r."widthSeconds" = ${SLOT_SECONDS} AND r."start" = s."slot"`,
        list,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO "UsageRollup" ${ROLLUP_COLUMNS}
         SELECT s."orgId", ${SLOT_SECONDS}, s."slot", a."apiKeyId", a."method", a."status", a."errorCode", count(*),
           sum(a."durationMs"), max(a."durationMs"), ${HISTOGRAM_OF_ROWS}
         FROM (${marked}) s
         CROSS JOIN LATERAL (
           SELECT * FROM "AuditLog" a WHERE a."orgId" = s."orgId" AND a."createdAt" >= s."slot"
             AND a."createdAt" < s."slot" + INTERVAL '30 minutes' OFFSET 0
         ) a
         GROUP BY s."orgId", s."slot", a."apiKeyId", a."method", a."status", a."errorCode"`,
        list,
      );
      for (const width of PARENT_WIDTHS) {
        const parents = `SELECT DISTINCT "orgId", date_bin(INTERVAL '${width} seconds', "slot", ${EPOCH}) AS "start"
          FROM (${marked}) s`;
        await tx.$executeRawUnsafe(
          `DELETE FROM "UsageRollup" r USING (${parents}) p
           WHERE r."orgId" = p."orgId" AND r."widthSeconds" = ${width} AND r."start" = p."start"`,
          list,
        );
        await tx.$executeRawUnsafe(
          `INSERT INTO "UsageRollup" ${ROLLUP_COLUMNS}
           SELECT p."orgId", ${width}, p."start", r."apiKeyId", r."method", r."status", r."errorCode", sum(r."requests"),
             sum(r."durationMsSum"), max(r."durationMsMax"), ${HISTOGRAM_OF_ROLLUPS}
           FROM (${parents}) p
           CROSS JOIN LATERAL (
             SELECT * FROM "UsageRollup" r WHERE r."orgId" = p."orgId" AND r."widthSeconds" = ${SLOT_SECONDS}
               AND r."start" >= p."start" AND r."start" < p."start" + INTERVAL '${width} seconds' OFFSET 0
           ) r
           GROUP BY p."orgId", p."start", r."apiKeyId", r."method", r."status", r."errorCode"`,
          list,
        );
      }
      await tx.$executeRawUnsafe(
        `DELETE FROM "UsagePendingSlot" m USING (${marked}) s WHERE m."orgId" = s."orgId" AND m."slot" = s."slot"`,
        list,
      );
      return marks.length;
    });
    slots += done;
    if (done < SLOTS_PER_RUN) return { slots };
  }
}
