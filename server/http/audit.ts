import { prisma } from "../db/client";

/** One audited API call (spec §1): who, what, outcome and duration in ms. */
export interface AuditEntry {
  orgId: string | null;
  apiKeyId: string | null;
  isTest: boolean;
  requestId: string;
  method: string;
  path: string;
  query: string | null;
  status: number;
  errorCode: string | null;
  durationMs: number;
  ip: string | null;
  userAgent: string | null;
}

const FLUSH_INTERVAL_MS = 250;
const FLUSH_SIZE = 200;
const queue: AuditEntry[] = [];
let timer: NodeJS.Timeout | undefined;
let flushing: Promise<void> = Promise.resolve();

/**
 * Queues an audit row; rows are written in batches (one `INSERT` per 200 rows or 250 ms), so auditing adds no database
 * round trip to the response path (spec §1). A failed batch is logged to stderr, never surfaced to the caller.
 */
export function recordAudit(entry: AuditEntry): void {
  queue.push(entry);
  if (queue.length >= FLUSH_SIZE) void flushAudit();
  else timer ??= setTimeout(() => void flushAudit(), FLUSH_INTERVAL_MS);
}

/** Writes every queued row now; resolves when they are stored. Called on shutdown and by tests. */
export function flushAudit(): Promise<void> {
  clearTimeout(timer);
  timer = undefined;
  const batch = queue.splice(0, queue.length);
  if (batch.length === 0) return flushing;
  flushing = flushing.then(() =>
    prisma()
      .auditLog.createMany({ data: batch })
      .then(() => undefined)
      .catch((error: unknown) => {
        console.error(
          JSON.stringify({ level: "error", message: "audit batch lost", rows: batch.length, error: String(error) }),
        );
      }),
  );
  return flushing;
}

// A normal shutdown writes what is still queued before the process exits.
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void flushAudit().finally(() => process.exit(0));
  });
}
