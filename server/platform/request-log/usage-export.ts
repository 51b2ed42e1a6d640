// The usage page's CSV export (docs/architecture.md, "Usage: the roll-up, the chart and the export").
import { Readable } from "node:stream";
import { setImmediate as yieldToOthers } from "node:timers/promises";
import { stringify } from "csv-stringify/sync";
import { log } from "../../observability/logger";
import { awaitDatabaseBudget, chargeDatabaseTime } from "../limits/organisation-budgets";
import { type AuditLogEntry, type AuditLogQuery, auditLogPages } from "./usage";

/** The export's columns, in order: header name and value of a row. */
const COLUMNS: Array<[string, (row: AuditLogEntry) => string | number | boolean | null]> = [
  ["time", (row) => row.createdAt.toISOString()],
  ["request_id", (row) => row.requestId],
  ["method", (row) => row.method],
  ["path", (row) => row.path],
  ["query", (row) => row.query],
  ["status", (row) => row.status],
  ["error_code", (row) => row.errorCode],
  ["duration_ms", (row) => row.durationMs],
  ["api_key_id", (row) => row.apiKeyId],
  ["test", (row) => row.isTest],
];

/** What an export covers: the usage page's filters over a range (whole buckets of at most 90 days, `usageRange`). */
export type UsageExportQuery = Omit<AuditLogQuery, "cursor" | "limit"> & { from: Date; to: Date };

/**
 * Rows read and serialised in one go before the thread serves other requests: a page of 250 is about 5 ms of its
 * time, a page of 1,000 held other organisations' requests 20 ms behind it.
 */
const ROWS_PER_PAGE = 250;

const CSV_OPTIONS = {
  columns: COLUMNS.map(([name]) => name),
  escape_formulas: true,
  cast: { boolean: (value: boolean) => (value ? "true" : "false") },
};

/**
 * The audit rows matching `query` as CSV (UTF-8 with a byte-order mark, a header row, RFC 4180 quoting, cells starting
 * with `=`, `+`, `-`, `@`, a tab or a carriage return prefixed with `'` so a spreadsheet shows them as text), newest
 * first. Pages of 250 rows are read only as the stream is consumed, so memory stays flat whatever the row count;
 * cancelling the stream (the client went away) stops the reading. Each page is one chunk, and the thread serves other
 * requests between two: an export of 200,000 rows is seconds of this thread's time, which, serialised row by row in
 * one go, held every other organisation's requests behind it; and each page waits for the organisation's database
 * time and is charged the time it took to read and serialise (docs/architecture.md, "Budgets: what one request may
 * cost"). Logs one line when it ends: rows, pages and whether
 * it was cancelled; then calls `onEnd` (which gives back the organisation's slot for expensive work).
 */
export function usageCsv(
  orgId: string,
  query: UsageExportQuery,
  options: { perOrg: number; onEnd?: () => Promise<void> },
): ReadableStream<Uint8Array> {
  const { perOrg, onEnd = async () => undefined } = options;
  // Each page waits for the organisation's database time and is charged what it took to read and write (docs/api-contract.md
  // §8.5): an export goes on at the pace the budget refills, whatever this thread or the database spends on it.
  let pageStarted = 0;
  const read = async <T>(statement: () => Promise<T>): Promise<T> => {
    await awaitDatabaseBudget(orgId, perOrg);
    pageStarted = performance.now();
    return statement();
  };
  let rows = 0;
  let pages = 0;
  let finished = false;
  async function* chunks() {
    try {
      // The header (after the byte-order mark) goes first, also when no row matches.
      yield Buffer.from(stringify([], { ...CSV_OPTIONS, bom: true, header: true }));
      for await (const page of auditLogPages(orgId, query, { pageSize: ROWS_PER_PAGE, read })) {
        pages += 1;
        rows += page.length;
        const chunk = Buffer.from(
          stringify(
            page.map((row) => COLUMNS.map(([, value]) => value(row) ?? "")),
            CSV_OPTIONS,
          ),
        );
        chargeDatabaseTime(orgId, perOrg, performance.now() - pageStarted);
        yield chunk;
        await yieldToOthers();
      }
      finished = true;
    } finally {
      log().info({ orgId, rows, pages, cancelled: !finished }, "usage export ended");
      await onEnd();
    }
  }
  const csv = Readable.from(chunks());
  csv.on("error", (error: NodeJS.ErrnoException) => {
    // A read that failed ends the download incomplete (the answer has started); a cancelled one is no failure.
    const cancelled = error?.name === "AbortError" || error?.code === "ERR_STREAM_PREMATURE_CLOSE";
    if (!cancelled) log().error({ err: error, orgId }, "usage export failed");
  });
  return Readable.toWeb(csv) as ReadableStream<Uint8Array>;
}
