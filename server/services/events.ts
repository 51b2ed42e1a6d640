import { randomBytes } from "node:crypto";
import type { Prisma } from "../db/generated/client";
import { afterCommit, transactionLocal } from "../db/transaction";
import type { Actor, EventName } from "../schemas/events";
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

// Live events recorded in one transaction are handed to Inngest together, in one send, once it has committed.
const HAND_OVER = Symbol("events to hand over after commit");

/**
 * Records events in the transactional outbox (DESIGN.md §6) inside the caller's transaction `tx`, so an event exists
 * exactly when its change committed, with what the events feed and webhook payloads carry (issue #13): the resource
 * (from the event name) and record id, the {@link Actor}, and for changes `changedFields` and `previous`. The row's
 * `txid` and `seq` (database defaults) order the feed.
 *
 * Live events are handed to Inngest after the outermost commit (`afterCommit`, server/db/transaction.ts): every event
 * of the transaction in one `inngest.send`, fire-and-forget (see `dispatchEvents`), so the request never waits for
 * Inngest nor fails with it; the sweeper resends whatever was not handed over. Test-key events (spec §5.6) and seed
 * events are stored with `fannedOutAt` already set: never handed over nor delivered, and out of the sweeper's way.
 * Every event's id and `createdAt` (its payload `timestamp`) come from one reading of this process's clock.
 */
export async function recordEvents(
  tx: Prisma.TransactionClient,
  orgId: string,
  origin: WriteOrigin,
  events: readonly EventInput[],
): Promise<void> {
  if (events.length === 0) return;
  // One statement over a JSON array: Prisma's createMany costs ~70 ms for a 500-event bulk request, this ~5 ms.
  const at = new Date();
  const rows = events.map((event) => {
    const change = event.before === undefined ? undefined : describeChange(event.before, event.data);
    return {
      id: newEventId(at),
      name: event.name,
      resource: event.name.split(".")[0],
      resourceId: (event.data as { id?: unknown }).id,
      data: event.data,
      changedFields: change?.changedFields ?? [],
      previous: change?.previous ?? null,
    };
  });
  const handled = origin.isTest || origin.deliver === false;
  await tx.$executeRawUnsafe(
    `INSERT INTO "Event" ("id", "orgId", "name", "resource", "resourceId", "data", "actor", "changedFields", "previous",
                          "isTest", "createdAt", "fannedOutAt")
     SELECT e."id", $1, e."name", e."resource", e."resourceId", e."data", $6::jsonb, e."changedFields", e."previous",
            $2, $4::timestamptz AT TIME ZONE 'UTC', CASE WHEN $3 THEN $4::timestamptz AT TIME ZONE 'UTC' END
     FROM jsonb_to_recordset($5::jsonb)
       AS e("id" text, "name" text, "resource" text, "resourceId" text, "data" jsonb, "changedFields" text[], "previous" jsonb)`,
    orgId,
    origin.isTest,
    handled,
    at.toISOString(),
    JSON.stringify(rows),
    JSON.stringify(actorOf(origin)),
  );
  if (handled) return;
  let first = false;
  const pending = transactionLocal(HAND_OVER, () => {
    first = true;
    return [] as Array<{ id: string; orgId: string }>;
  });
  pending.push(...rows.map((row) => ({ id: row.id, orgId })));
  if (first) await afterCommit(() => dispatchEvents(pending));
}
