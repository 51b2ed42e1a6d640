// The usage page's CSV export (docs/architecture.md, "Usage: the roll-up, the chart and the export").
import { pipeline, Readable } from "node:stream";
import { stringify } from "csv-stringify";
import { log } from "../observability/logger";
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
 * The audit rows matching `query` as CSV (UTF-8 with a byte-order mark, a header row, RFC 4180 quoting, cells starting
 * with `=`, `+`, `-`, `@`, a tab or a carriage return prefixed with `'` so a spreadsheet shows them as text), newest
 * first. Pages of 1,000 rows are read only as the stream is consumed, so memory stays flat whatever the row count;
 * cancelling the stream (the client went away) stops the reading. Logs one line when it ends: rows, pages and whether
 * it was cancelled; then calls `onEnd` (which gives back the organisation's slot for expensive work).
 */
export function usageCsv(
  orgId: string,
  query: UsageExportQuery,
  onEnd: () => Promise<void> = async () => undefined,
): ReadableStream<Uint8Array> {
  let rows = 0;
  let pages = 0;
  let finished = false;
  async function* records() {
    try {
      for await (const page of auditLogPages(orgId, query)) {
        pages += 1;
        for (const row of page) {
          rows += 1;
          yield COLUMNS.map(([, value]) => value(row) ?? "");
        }
      }
      finished = true;
    } finally {
      log().info({ orgId, rows, pages, cancelled: !finished }, "usage export ended");
      await onEnd();
    }
  }
  // pipeline destroys the reading when the CSV side is destroyed (a cancelled download), which returns the generator.
  const csv = pipeline(
    Readable.from(records()),
    stringify({
      bom: true,
      header: true,
      columns: COLUMNS.map(([name]) => name),
      escape_formulas: true,
      cast: { boolean: (value) => (value ? "true" : "false") },
    }),
    (error) => {
      // A read that failed ends the download incomplete (the answer has started); a cancelled one is no failure.
      const cancelled = error?.name === "AbortError" || error?.code === "ERR_STREAM_PREMATURE_CLOSE";
      if (error && !cancelled) log().error({ err: error, orgId }, "usage export failed");
    },
  );
  return Readable.toWeb(csv) as ReadableStream<Uint8Array>;
}
