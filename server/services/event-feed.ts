// The events feed (issue #13): every change of an organisation, oldest first, that a poller can follow without ever
// skipping an event, and the payload it shares with webhook deliveries.
//
// Visibility in commit order. Each event row stores the id of the transaction that wrote it (`txid`, from
// `pg_current_xact_id()`) and an insertion sequence (`seq`). The feed orders by (txid, seq) and serves only events
// whose txid is below the visibility horizon `pg_snapshot_xmin(pg_current_snapshot())`: the oldest transaction still
// running. Every transaction below the horizon has ended, and every transaction that has not ended yet, or that
// starts writing later, has a txid at or above it; so once a poller has read past (txid, seq), no event can appear
// before that point later. Two transactions that commit in the reverse order of their ids are served in id order,
// both only after the older one has ended. A transaction that stays open holds the feed back (not other writes)
// until it ends; the API's own transactions last milliseconds.
import { Prisma } from "../db/generated/client";
import { prisma } from "../db/transaction";
import { env } from "../env";
import { ApiError, notFound } from "../errors";
import { type Actor, type EventListQuery, type EventPayload, TEST_EVENT_NAME } from "../schemas/events";

/** An event row as the feed and the webhook deliveries read it. */
export interface StoredEvent {
  id: string;
  name: string;
  orgId: string;
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
  createdAt: true,
  data: true,
  resource: true,
  actor: true,
  changedFields: true,
  previous: true,
} as const satisfies Prisma.EventSelect;

/**
 * The payload of an event, the same in the feed and in webhook deliveries (spec §6.2, issue #13), keys in the order
 * `id, event, timestamp, orgId, resource, actor, data[, changedFields, previous]`; `changedFields` and `previous` only
 * for changes of an existing record. Events stored before the feed existed have the system as actor.
 */
export function eventPayload(row: StoredEvent): EventPayload {
  const payload: EventPayload = {
    id: row.id,
    event: row.name,
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
  txid: bigint;
  seq: bigint;
  /** Unix seconds of the event at this position: a cursor older than the retention period has expired. */
  at: number;
}

function encodeCursor(position: FeedPosition): string {
  return Buffer.from(`v1.${position.txid}.${position.seq}.${position.at}`).toString("base64url");
}

function decodeCursor(cursor: string): FeedPosition {
  const match = /^v1\.(\d{1,19})\.(\d{1,19})\.(\d{1,12})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) {
    throw new ApiError("bad_request", "cursor is not a nextCursor of the events feed; start without a cursor", {
      details: [{ path: ["cursor"], message: "not a cursor of this feed" }],
    });
  }
  return { txid: BigInt(match[1] as string), seq: BigInt(match[2] as string), at: Number(match[3]) };
}

type FeedRow = StoredEvent & { txid: bigint; seq: bigint };

/**
 * One page of the organisation's events feed (issue #13), oldest first in commit-safe order (see the top of this
 * file), optionally only some event names (`types`) or one `resource`. Webhook test events are not part of it.
 * @returns `{ data, hasMore, nextCursor }`: `nextCursor` continues after the last event of the page and is present on
 *          the last page too (the cursor given is returned when no newer event is visible yet); null only for an
 *          empty feed read without a cursor.
 * @throws ApiError `bad_request` (400) for a cursor this feed did not make; `cursor_expired` (410) for a cursor older
 *         than the retention period ({@link eventRetentionMs}).
 */
export async function listEvents(
  orgId: string,
  query: EventListQuery,
  now = new Date(),
): Promise<{ data: EventPayload[]; hasMore: boolean; nextCursor: string | null }> {
  const after = query.cursor ? decodeCursor(query.cursor) : { txid: -1n, seq: -1n, at: 0 };
  if (query.cursor && after.at * 1000 < now.getTime() - eventRetentionMs()) {
    throw new ApiError(
      "cursor_expired",
      `cursor is older than the ${env().EVENT_RETENTION_DAYS}-day retention of the events feed: list the resources again, then follow the feed from its start`,
      { details: [{ path: ["cursor"], message: "older than the retention period" }] },
    );
  }
  const filters: Prisma.Sql[] = [Prisma.empty];
  if (query.types) filters.push(Prisma.sql`AND "name" = ANY(${query.types.split(",")}::text[])`);
  if (query.resource) filters.push(Prisma.sql`AND "resource" = ${query.resource}`);
  const rows = await prisma().$queryRaw<FeedRow[]>`
    SELECT "id", "name", "orgId", "createdAt", "data", "resource", "actor", "changedFields", "previous", "txid", "seq"
    FROM "Event"
    WHERE "orgId" = ${orgId}
      AND ("txid", "seq") > (${after.txid}, ${after.seq})
      AND "txid" < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
      AND "name" <> ${TEST_EVENT_NAME}
      ${Prisma.join(filters, " ")}
    ORDER BY "txid", "seq"
    LIMIT ${query.limit + 1}`;
  const hasMore = rows.length > query.limit;
  const page = hasMore ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  const nextCursor = last
    ? encodeCursor({ txid: last.txid, seq: last.seq, at: Math.floor(last.createdAt.getTime() / 1000) })
    : (query.cursor ?? null);
  return { data: page.map(eventPayload), hasMore, nextCursor };
}

/**
 * One event of the organisation's feed by id (issue #13), visible or not yet past the horizon.
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
