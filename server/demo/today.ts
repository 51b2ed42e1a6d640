// The demo book of the embedded database's template is seeded when the build runs (docs/architecture.md, "The embedded
// database"); a first start long after the build moves it to the present, so "the last 90 days", due dates, health
// history and scores read as they would had the book been seeded at that start.
import { prisma, transaction } from "../db/transaction";

const DAY_MS = 86_400_000;

/** Below this age a template's book is left as it is: a start right after the build (the README's first command). */
export const DEMO_BOOK_STALE_MS = 3_600_000;

// Far enough to clear every real value of a column, so a column in a unique index can be moved in two steps without
// one moved row meeting a row not moved yet (PostgreSQL checks a non-deferrable unique index row by row).
const PARKING_DAYS = 1_000_000;

interface TimeColumn {
  table: string;
  column: string;
  isDate: boolean;
  unique: boolean;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Moves every time of an organisation forward by `byMs` milliseconds: each `timestamp` column of each table with an
 * `orgId` column (and the organisation's own row) by `byMs`, each `date` column by the whole UTC days between
 * `from` and `from + byMs`, and, in its events' `data` and `previous`, each top-level ISO 8601 time or date string the
 * same way, all in one transaction (maintenance work: docs/architecture.md, "Budgets: what one request may cost").
 * Columns found from the catalogue, so a table added later is moved too.
 * @param from when the book was seeded (its organisation's `createdAt`), for the day count of `date` columns.
 */
export async function shiftOrganisationTimes(orgId: string, from: Date, byMs: number): Promise<void> {
  const days = Math.floor((from.getTime() + byMs) / DAY_MS) - Math.floor(from.getTime() / DAY_MS);
  const interval = `${byMs} milliseconds`;
  await transaction(async (tx) => {
    const columns = await tx.$queryRawUnsafe<TimeColumn[]>(
      `SELECT c.table_name AS "table", c.column_name AS "column", c.data_type = 'date' AS "isDate",
              EXISTS (SELECT 1 FROM pg_index AS i
                      JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                      WHERE i.indisunique AND i.indrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
                        AND a.attname = c.column_name) AS "unique"
       FROM information_schema.columns AS c
       WHERE c.table_schema = current_schema()
         AND c.data_type IN ('date', 'timestamp without time zone')
         AND (c.table_name = 'Organisation'
              OR EXISTS (SELECT 1 FROM information_schema.columns AS o
                         WHERE o.table_schema = c.table_schema AND o.table_name = c.table_name AND o.column_name = 'orgId'))
       ORDER BY 1, 2`,
    );
    const byTable = new Map<string, TimeColumn[]>();
    for (const column of columns) byTable.set(column.table, [...(byTable.get(column.table) ?? []), column]);
    for (const [table, list] of byTable) {
      const owner = table === "Organisation" ? `"id" = $1` : `"orgId" = $1`;
      // A column in a unique index goes past every real value first, then back to its place.
      const step = (column: TimeColumn, parkDays: number) =>
        column.isDate ? `${days + parkDays}` : `$2::interval + make_interval(days => ${parkDays})`;
      const set = (targets: TimeColumn[], by: (column: TimeColumn) => string) =>
        targets.map((column) => `${quote(column.column)} = ${quote(column.column)} + ${by(column)}`).join(", ");
      const moveAll = `UPDATE ${quote(table)} SET ${set(list, (column) => step(column, column.unique ? PARKING_DAYS : 0))} WHERE ${owner}`;
      // A table of dates alone names no interval, and PostgreSQL refuses a parameter it cannot type.
      await tx.$executeRawUnsafe(moveAll, ...(moveAll.includes("$2") ? [orgId, interval] : [orgId]));
      const parked = list.filter((column) => column.unique);
      if (parked.length > 0) {
        const back = (column: TimeColumn) =>
          column.isDate ? `${-PARKING_DAYS}` : `make_interval(days => ${-PARKING_DAYS})`;
        await tx.$executeRawUnsafe(`UPDATE ${quote(table)} SET ${set(parked, back)} WHERE ${owner}`, orgId);
      }
    }
    // The events' snapshots of their records: top-level times and dates, as the API writes them.
    for (const column of ["data", "previous"]) {
      await tx.$executeRawUnsafe(
        `UPDATE "Event" SET ${quote(column)} = (
           SELECT jsonb_object_agg(k, CASE
             WHEN jsonb_typeof(v) = 'string' AND v #>> '{}' ~ '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?Z$'
               THEN to_jsonb(to_char(((v #>> '{}')::timestamptz AT TIME ZONE 'UTC') + $2::interval,
                                     'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
             WHEN jsonb_typeof(v) = 'string' AND v #>> '{}' ~ '^\\d{4}-\\d{2}-\\d{2}$'
               THEN to_jsonb(to_char((v #>> '{}')::date + $3::int, 'YYYY-MM-DD'))
             ELSE v END)
           FROM jsonb_each(${quote(column)}) AS x(k, v))
         WHERE "orgId" = $1 AND jsonb_typeof(${quote(column)}) = 'object' AND ${quote(column)} <> '{}'::jsonb`,
        orgId,
        interval,
        days,
      );
    }
  });
}

/**
 * Moves the demo organisation's book to the present when it was seeded more than {@link DEMO_BOOK_STALE_MS} ago (the
 * build's template copied at a first start; docs/architecture.md, "The embedded database"), by the time since its
 * organisation was created.
 * @returns the milliseconds the book was moved by; 0 when it was recent enough.
 */
export async function bringDemoBookToToday(orgId: string, now = Date.now()): Promise<number> {
  const [row] = await prisma().$queryRawUnsafe<Array<{ createdAt: Date }>>(
    `SELECT "createdAt" FROM "Organisation" WHERE "id" = $1`,
    orgId,
  );
  if (!row) return 0;
  const byMs = now - row.createdAt.getTime();
  if (byMs < DEMO_BOOK_STALE_MS) return 0;
  await shiftOrganisationTimes(orgId, row.createdAt, byMs);
  return byMs;
}
