// The events feed: every change of an organisation, oldest first, that a poller can follow without ever skipping an
// event or applying an older state of a record after a newer one, and the payload it shares with webhook deliveries.
//
// Commit order per organisation. Every event carries `sequence`, its position in its organisation's feed. A write hands
// its events to the database (`event_record`, migration 20261126100000_event_sequence); while its transaction commits,
// a deferred trigger adds their count to the organisation's `EventCounter` row and inserts them numbered, holding
// that row's lock to the end of the commit. A transaction therefore takes its numbers only after every transaction
// that took smaller ones has committed: whenever a reader sees number n, it sees every smaller number of the
// organisation too, so the feed serves `sequence > cursor` with no horizon and never waits. Two transactions that
// change the same record commit in the order they held its row lock, so the record's last event in the feed carries
// its last committed state. The counter is locked only inside COMMIT, never while a transaction is open, and
// organisations never share one: an open transaction holds back no feed and no other writer (docs/architecture.md,
// "Events feed").
import { Prisma } from "../../db/generated/client";
import { prisma } from "../../db/transaction";
import { env } from "../../env";
import { ApiError, notFound } from "../../errors";
import { CURSOR_KINDS, notACursor, openCursor, sealCursor, unknownCursor } from "../../records/pagination";
import { type Actor, type EventListQuery, type EventPayload, TEST_EVENT_NAME } from "./schema";

/** An event row as the feed and the webhook deliveries read it. */
export interface StoredEvent {
  id: string;
  name: string;
  orgId: string;
  /** Position in the organisation's feed, in commit order. */
  sequence: bigint;
  createdAt: Date;
  data: unknown;
  resource: string | null;
  actor: unknown;
  changedFields: string[];
  previous: unknown;
}

/** The columns of {@link StoredEvent}, for Prisma selects. */
export const storedEventSelect = {
  id: true,
  name: true,
  orgId: true,
  sequence: true,
  createdAt: true,
  data: true,
  resource: true,
  actor: true,
  changedFields: true,
  previous: true,
} as const satisfies Prisma.EventSelect;

/**
 * The payload of an event, the same in the feed and in webhook deliveries (docs/api-contract.md §6.2;
 * docs/architecture.md, "Events feed"), keys in the order
 * `id, event, sequence, timestamp, orgId, resource, actor, data[, changedFields, previous]`; `sequence` is a JSON
 * integer (at most 2^53 − 1); `changedFields` and `previous` only for changes of an existing record. Events stored
 * before the feed existed have the system as actor.
 */
export function eventPayload(row: StoredEvent): EventPayload {
  const payload: EventPayload = {
    id: row.id,
    event: row.name,
    sequence: Number(row.sequence),
    timestamp: row.createdAt.toISOString(),
    orgId: row.orgId,
    resource: row.resource as EventPayload["resource"],
    actor: (row.actor as Actor | null) ?? { type: "system" },
    data: row.data as Record<string, unknown>,
  };
  if (row.previous !== null && row.previous !== undefined) {
    payload.changedFields = row.changedFields;
    payload.previous = row.previous as Record<string, unknown>;
  }
  return payload;
}

/** How long the feed keeps events (ms): `EVENT_RETENTION_DAYS`, 30 days by default. */
export function eventRetentionMs(): number {
  return env().EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000;
}

interface FeedPosition {
  /** The last `sequence` read: the page continues after it. */
  sequence: bigint;
  /** Unix seconds of the event at this position: a cursor older than the retention period has expired. */
  at: number;
}

/**
 * A cursor: signed (pagination.ts, {@link sealCursor}) for the organisation, holding the position as 8 bytes of
 * `sequence` and 4 of Unix seconds: 34 characters.
 */
function encodeCursor(orgId: string, position: FeedPosition): string {
  const payload = Buffer.alloc(12);
  payload.writeBigUInt64BE(position.sequence);
  payload.writeUInt32BE(position.at, 8);
  return sealCursor(CURSOR_KINDS.feed, payload, orgId);
}

const BIGINT_MAX = 2n ** 63n - 1n;

/**
 * A cursor as written: the current, signed format names a position; an event's id (`evt_<at>_<token>`, as a list's
 * cursor may be its last record's id) and the unsigned formats made before cursors were signed (`v2.<sequence>.<at>`,
 * and the first `v1.<txid>.<seq>.<at>`, before events had a `sequence`) name an event, which must be found to be
 * trusted.
 */
type ParsedCursor =
  | ({ signed: true } & FeedPosition)
  | { signed: false; eventId: string; at: number }
  | { signed: false; sequence: bigint; at: number }
  | { signed: false; legacySeq: bigint; at: number };

/** An event id (docs/api-contract.md §6.2): its Unix seconds and its token. */
const EVENT_ID = /^evt_(\d{1,12})_[A-Za-z0-9_-]{1,43}$/;

/**
 * Reads a cursor of the organisation's feed: a signed one, an event's id, or one of the unsigned formats.
 * @throws ApiError `bad_request` (400) for anything else (docs/api-contract.md §4.9.1).
 */
function parseCursor(orgId: string, cursor: string): ParsedCursor {
  const opened = openCursor(cursor, orgId);
  if (opened) {
    if (opened.kind !== CURSOR_KINDS.feed || opened.payload.length !== 12) throw notACursor();
    return { signed: true, sequence: opened.payload.readBigUInt64BE(), at: opened.payload.readUInt32BE(8) };
  }
  const eventAt = EVENT_ID.exec(cursor)?.[1];
  if (eventAt !== undefined) return { signed: false, eventId: cursor, at: Number(eventAt) };
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const second = /^v2\.(\d{1,19})\.(\d{1,12})$/.exec(text);
  const first = /^v1\.\d{1,19}\.(\d{1,19})\.(\d{1,12})$/.exec(text);
  const position = BigInt((second ?? first)?.[1] ?? -1);
  // Past PostgreSQL's bigint the comparison would fail in the database: no cursor of ours gets there.
  if (position < 0n || position > BIGINT_MAX) throw notACursor();
  const at = Number((second ?? first)?.[2]);
  return second ? { signed: false, sequence: position, at } : { signed: false, legacySeq: position, at };
}

/**
 * The position a cursor names. A signed cursor is the position itself. An unsigned one is trusted only as far as the
 * database confirms it: an event id when it is an event of the organisation's feed (its primary key; a webhook test
 * event is not in the feed), a `v2` cursor when the organisation's event of that `sequence` was recorded in that
 * second, a `v1` cursor when the organisation has the event of that insertion number in that second (one index range
 * of `(orgId, createdAt)`), whose `sequence` it continues after (the migration numbered the events in that format's
 * order). So a cursor forged from an event's visible parts names no more than a cursor the feed made.
 * @throws ApiError `bad_request` (400) for an unsigned cursor the organisation's events do not confirm.
 */
async function cursorPosition(orgId: string, cursor: ParsedCursor): Promise<FeedPosition> {
  if (cursor.signed) return cursor;
  const [event] =
    "eventId" in cursor
      ? await prisma().$queryRaw<Array<{ sequence: bigint }>>`
          SELECT "sequence" FROM "Event"
          WHERE "orgId" = ${orgId} AND "id" = ${cursor.eventId} AND "name" <> ${TEST_EVENT_NAME}`
      : "sequence" in cursor
        ? await prisma().$queryRaw<Array<{ sequence: bigint }>>`
          SELECT "sequence" FROM "Event"
          WHERE "orgId" = ${orgId} AND "sequence" = ${cursor.sequence}
            AND "createdAt" >= to_timestamp(${cursor.at}) AT TIME ZONE 'UTC'
            AND "createdAt" < to_timestamp(${cursor.at + 1}) AT TIME ZONE 'UTC'`
        : await prisma().$queryRaw<Array<{ sequence: bigint }>>`
          SELECT "sequence" FROM "Event"
          WHERE "orgId" = ${orgId} AND "legacySeq" = ${cursor.legacySeq}
            AND "createdAt" >= to_timestamp(${cursor.at}) AT TIME ZONE 'UTC'
            AND "createdAt" < to_timestamp(${cursor.at + 1}) AT TIME ZONE 'UTC'`;
  if (!event) throw "eventId" in cursor ? unknownCursor() : notACursor();
  return { sequence: event.sequence, at: cursor.at };
}

/**
 * One page of the organisation's events feed, oldest first in commit order (`sequence`, see the top of this file),
 * optionally only some event names (`types`) or one `resource`. Webhook test events are not part of it. Cursors are
 * signed for the organisation; an event's id continues right after that event, as a list's cursor may be its last
 * record's id (docs/api-contract.md §6.8), and the unsigned formats made before (`v2.…`, `v1.…`) are still accepted
 * when the database confirms the event they name, and continue where they stopped; every page answers with a signed
 * cursor.
 * @returns `{ data, hasMore, nextCursor }`: `nextCursor` continues after the last event of the page and is present on
 *          the last page too (the position given is returned when no newer event exists yet); null only for an empty
 *          feed read without a cursor.
 * @throws ApiError `bad_request` (400) for a cursor this feed did not make or an id of no event of its feed;
 *         `cursor_expired` (410) for a cursor older than the retention period ({@link eventRetentionMs}), an event id
 *         by its seconds.
 */
export async function listEvents(
  orgId: string,
  query: EventListQuery,
  now = new Date(),
): Promise<{ data: EventPayload[]; hasMore: boolean; nextCursor: string | null }> {
  const parsed = query.cursor === undefined ? null : parseCursor(orgId, query.cursor);
  // Checked before an unsigned cursor is looked up: its event may be purged by now.
  if (parsed && parsed.at * 1000 < now.getTime() - eventRetentionMs()) {
    throw new ApiError(
      "cursor_expired",
      `cursor is older than the ${env().EVENT_RETENTION_DAYS}-day retention of the events feed: list the resources again, then follow the feed from its start`,
      { details: [{ path: ["cursor"], message: "older than the retention period" }] },
    );
  }
  const after = parsed ? await cursorPosition(orgId, parsed) : null;
  const filters: Prisma.Sql[] = [Prisma.empty];
  if (query.types) filters.push(Prisma.sql`AND "name" = ANY(${query.types.split(",")}::text[])`);
  if (query.resource) filters.push(Prisma.sql`AND "resource" = ${query.resource}`);
  const rows = await prisma().$queryRaw<StoredEvent[]>`
    SELECT "id", "name", "orgId", "sequence", "createdAt", "data", "resource", "actor", "changedFields", "previous"
    FROM "Event"
    WHERE "orgId" = ${orgId}
      AND "sequence" > ${after?.sequence ?? 0n}
      AND "name" <> ${TEST_EVENT_NAME}
      ${Prisma.join(filters, " ")}
    ORDER BY "sequence"
    LIMIT ${query.limit + 1}`;
  const hasMore = rows.length > query.limit;
  const page = hasMore ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  const position = last ? { sequence: last.sequence, at: Math.floor(last.createdAt.getTime() / 1000) } : after;
  return { data: page.map(eventPayload), hasMore, nextCursor: position ? encodeCursor(orgId, position) : null };
}

/**
 * One event of the organisation's feed by id.
 * @throws ApiError `not_found` (404) when missing, a webhook test event, or another organisation's.
 */
export async function getEvent(orgId: string, id: string): Promise<EventPayload> {
  const row = await prisma().event.findFirst({
    where: { orgId, id, name: { not: TEST_EVENT_NAME } },
    select: storedEventSelect,
  });
  if (!row) throw notFound("Event", id);
  return eventPayload(row);
}

/**
 * Deletes events older than the retention period ({@link eventRetentionMs}), with their webhook deliveries and
 * attempts (the delivery log keeps the same 30 days). Runs daily (inngest/functions/purge-expired-events.ts).
 * @returns the number of events deleted.
 */
export async function purgeExpiredEvents(now = new Date()): Promise<number> {
  const { count } = await prisma().event.deleteMany({
    where: { createdAt: { lt: new Date(now.getTime() - eventRetentionMs()) } },
  });
  return count;
}
