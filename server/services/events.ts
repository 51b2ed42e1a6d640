import { randomBytes } from "node:crypto";
import type { Prisma } from "../db/generated/client";
import { afterCommit, beforeCommit, onSavepointRollback, transactionLocal } from "../db/transaction";
import { type Actor, type EventName, TEST_EVENT_NAME } from "../schemas/events";
import { dispatchEvents } from "../webhooks/hand-over";

/**
 * Who caused a write: test keys' events are stored but never delivered (spec §5.6, §6); `deliver: false` records
 * events that are never handed to webhooks either (the demo seed: issue #11 B). `apiKeyId` or `userId` name the
 * actor the events carry (issue #13); with neither, the actor is the system.
 */
export interface WriteOrigin {
  isTest: boolean;
  deliver?: boolean;
  apiKeyId?: string;
  userId?: string;
}

/** The {@link Actor} of a write's origin. */
export function actorOf(origin: WriteOrigin): Actor {
  if (origin.apiKeyId) return { type: "api_key", id: origin.apiKeyId };
  if (origin.userId) return { type: "user", id: origin.userId };
  return { type: "system" };
}

/**
 * The `data` of a hard deletion's event (issue #13): a tombstone naming the record that is gone, in the manner of
 * Stripe's deleted objects. `externalKey` is the resource's own external key where it has one (`externalId` of an
 * account, `rmmAgentId` of a device).
 * @returns `{ id, resource, deleted: true, ...externalKey }`
 */
export function tombstone(
  resource: string,
  id: string,
  externalKey: Record<string, string | null> = {},
): { id: string; resource: string; deleted: true } {
  return { id, resource, deleted: true, ...externalKey };
}

/**
 * One event to record: its name, `data` (the resource exactly as its GET returns it after the change, or a
 * {@link tombstone}), and for a change of an existing record `before`, the resource as its GET returned it before, from
 * which the event's `changedFields` and `previous` are derived.
 */
export interface EventInput {
  name: EventName;
  data: unknown;
  before?: unknown;
}

/** Fields never listed as changed: they move with every change. */
const UNTRACKED_FIELDS = new Set(["updatedAt"]);

/**
 * What a change did to a record (issue #13): the fields whose values differ between `before` and `after` (compared as
 * JSON, `updatedAt` left out) in the order of `after`, and the values they had.
 */
export function describeChange(before: unknown, after: unknown): { changedFields: string[]; previous: object } {
  if (!before || !after || typeof before !== "object" || typeof after !== "object") {
    return { changedFields: [], previous: {} };
  }
  const old = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const changedFields: string[] = [];
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(now)) {
    if (UNTRACKED_FIELDS.has(key) || JSON.stringify(old[key]) === JSON.stringify(now[key])) continue;
    changedFields.push(key);
    previous[key] = old[key] ?? null;
  }
  return { changedFields, previous };
}

/** Origin of the demo seed: its events are recorded but never delivered, so no seed record reaches an endpoint. */
export const SEED_ORIGIN: WriteOrigin = { isTest: false, deliver: false };

/**
 * A new event id, `evt_<unix_seconds>_<token>` (spec §6.2), stable across redeliveries; `at` is the event's time, so
 * the id's seconds and its `timestamp` come from the same clock (issue #11 B).
 */
export function newEventId(at = new Date()): string {
  return `evt_${Math.floor(at.getTime() / 1000)}_${randomBytes(9).toString("base64url")}`;
}

/** An event row waiting for its transaction's commit, as the stamping statement reads it (JSON). */
interface PendingEvent {
  id: string;
  name: string;
  resource: string | null;
  resourceId: unknown;
  data: unknown;
  actor: Actor;
  changedFields: string[];
  previous: unknown;
  isTest: boolean;
  /** Test-key and seed events: stored as already fanned out, never handed to Inngest. */
  handled: boolean;
  /** ISO 8601: the event's `timestamp`, when the change was recorded (not when it committed). */
  createdAt: string;
}

/** The events a transaction has recorded so far, by organisation, in the order they were recorded. */
type PendingEvents = Map<string, PendingEvent[]>;

const PENDING = Symbol("events waiting for the commit");

/**
 * Writes `events` of one organisation with the organisation's next sequence numbers, in the given order, in ONE
 * statement: it adds `events.length` to the organisation's `EventCounter` row (creating it at the first event), which
 * locks that row until `tx` ends, and inserts the events numbered `last - n + 1 … last`. Another transaction stamping
 * the same organisation waits here until `tx` has committed or rolled back, so the numbers follow commit order and a
 * number is visible only after every smaller one of the organisation (docs/architecture.md, "Events feed").
 */
async function stampEvents(
  tx: Prisma.TransactionClient,
  orgId: string,
  events: readonly PendingEvent[],
): Promise<void> {
  // One statement over a JSON array: Prisma's createMany costs ~70 ms for a 500-event bulk request, this ~5 ms.
  await tx.$executeRawUnsafe(
    `WITH "counter" AS (
       INSERT INTO "EventCounter" ("orgId", "lastSequence") VALUES ($1, $2::bigint)
       ON CONFLICT ("orgId") DO UPDATE SET "lastSequence" = "EventCounter"."lastSequence" + EXCLUDED."lastSequence"
       RETURNING "lastSequence"
     )
     INSERT INTO "Event" ("id", "orgId", "sequence", "name", "resource", "resourceId", "data", "actor", "changedFields",
                          "previous", "isTest", "createdAt", "fannedOutAt")
     SELECT e."id", $1, "counter"."lastSequence" - $2::bigint + e."position", e."name", e."resource", e."resourceId",
            e."data", e."actor", e."changedFields", e."previous", e."isTest", e."createdAt" AT TIME ZONE 'UTC',
            CASE WHEN e."handled" THEN e."createdAt" AT TIME ZONE 'UTC' END
     FROM "counter", jsonb_to_recordset($3::jsonb)
       AS e("position" bigint, "id" text, "name" text, "resource" text, "resourceId" text, "data" jsonb, "actor" jsonb,
            "changedFields" text[], "previous" jsonb, "isTest" boolean, "handled" boolean, "createdAt" timestamptz)`,
    orgId,
    events.length,
    JSON.stringify(events.map((event, index) => ({ ...event, position: index + 1 }))),
  );
}

/**
 * Writes every event the transaction recorded, organisation by organisation (in id order, so two transactions that
 * both write events of the same two organisations lock their counters in the same order and cannot deadlock).
 */
async function stampPending(tx: Prisma.TransactionClient, pending: PendingEvents): Promise<void> {
  for (const orgId of [...pending.keys()].sort()) {
    const events = pending.get(orgId) ?? [];
    if (events.length > 0) await stampEvents(tx, orgId, events);
  }
}

/**
 * Records events in the transactional outbox (docs/architecture.md, "Webhooks and the outbox") as part of the caller's
 * transaction `tx`, so an event exists exactly when its change committed, with what the events feed and webhook
 * payloads carry: the resource (from the event name) and record id, the {@link Actor}, and for changes
 * `changedFields` and `previous`. Each event's id and `createdAt` (its payload `timestamp`) come from one reading of
 * this process's clock, taken now.
 *
 * The rows are written when `tx` is about to commit ({@link beforeCommit}), all of the transaction's events of an
 * organisation in one statement that also gives them the organisation's next `sequence` numbers (see
 * {@link stampEvents}), so the organisation's counter stays locked only from that statement to the commit. Events
 * recorded inside a savepoint that rolls back are dropped with it. Until then the events are not in the table.
 *
 * Live events are handed to Inngest after the outermost commit (`afterCommit`): every event of the transaction in one
 * `inngest.send`, fire-and-forget (see `dispatchEvents`), so the request never waits for Inngest nor fails with it;
 * the sweeper resends whatever was not handed over. Test-key events (spec §5.6) and seed events are stored with
 * `fannedOutAt` already set: never handed over nor delivered, and out of the sweeper's way.
 * @param _tx the caller's transaction, opened with `transaction()` (server/db/transaction.ts).
 * @throws Error outside a transaction.
 */
export async function recordEvents(
  _tx: Prisma.TransactionClient,
  orgId: string,
  origin: WriteOrigin,
  events: readonly EventInput[],
): Promise<void> {
  if (events.length === 0) return;
  const at = new Date();
  const createdAt = at.toISOString();
  const actor = actorOf(origin);
  const handled = origin.isTest || origin.deliver === false;
  const rows = events.map((event): PendingEvent => {
    const change = event.before === undefined ? undefined : describeChange(event.before, event.data);
    return {
      id: newEventId(at),
      name: event.name,
      resource: event.name.split(".")[0] ?? null,
      resourceId: (event.data as { id?: unknown }).id,
      data: event.data,
      actor,
      changedFields: change?.changedFields ?? [],
      previous: change?.previous ?? null,
      isTest: origin.isTest,
      handled,
      createdAt,
    };
  });
  let first = false;
  const pending = transactionLocal(PENDING, (): PendingEvents => {
    first = true;
    return new Map();
  });
  if (first) {
    beforeCommit((tx) => stampPending(tx, pending));
    await afterCommit(() =>
      dispatchEvents(
        [...pending].flatMap(([eventOrgId, list]) =>
          list.filter((event) => !event.handled).map((event) => ({ id: event.id, orgId: eventOrgId })),
        ),
      ),
    );
  }
  const list = pending.get(orgId) ?? [];
  pending.set(orgId, list);
  const kept = list.length;
  list.push(...rows);
  onSavepointRollback(() => {
    list.length = kept;
  });
}

/**
 * Records the `webhook.test` event of `POST /webhook-endpoints/{id}/test` ({@link TEST_EVENT_NAME}, data
 * `{message, endpointId}`) at once, inside `tx`, with the organisation's next `sequence` like any event, so the
 * delivery row that names it can follow in the same transaction. It is stored as fanned out (never handed to
 * Inngest) and the events feed leaves it out.
 */
export async function recordTestEvent(
  tx: Prisma.TransactionClient,
  orgId: string,
  origin: WriteOrigin,
  event: { id: string; at: Date; data: { message: string; endpointId: string } },
): Promise<void> {
  await stampEvents(tx, orgId, [
    {
      id: event.id,
      name: TEST_EVENT_NAME,
      resource: null,
      resourceId: null,
      data: event.data,
      actor: actorOf(origin),
      changedFields: [],
      previous: null,
      isTest: false,
      handled: true,
      createdAt: event.at.toISOString(),
    },
  ]);
}
