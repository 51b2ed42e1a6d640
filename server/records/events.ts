import { isDeepStrictEqual } from "node:util";
import type { Prisma } from "../db/generated/client";
import { randomChunk } from "../db/ids";
import { afterCommit, transactionLocal } from "../db/transaction";
import { type Actor, type EventName, TEST_EVENT_NAME } from "../platform/events-feed/schema";
import { dispatchEvents } from "../webhooks/hand-over";

/**
 * Who caused a write: test keys' events are stored but never delivered (docs/api-contract.md §5.6, §6);
 * `deliver: false` records events that are never handed to webhooks either (the demo seed). `apiKeyId` or `userId` name
 * the actor the events carry; with neither, the actor is the system.
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
 * The `data` of a hard deletion's event: a tombstone naming the record that is gone, in the manner of
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

/** A field whose object value is reported key by key: a record's custom field values (`customFields.<key>`). */
const PER_KEY_FIELDS = new Set(["customFields"]);

/**
 * What a change did to a record: the fields whose values differ between `before` and `after` (compared by structure,
 * so an object whose keys come back reordered is unchanged; `updatedAt` left out) in the order of `after`, and the
 * values they had. A custom field value is its own field, `customFields.<key>` (null in `previous` when it had none).
 */
export function describeChange(before: unknown, after: unknown): { changedFields: string[]; previous: object } {
  if (!before || !after || typeof before !== "object" || typeof after !== "object") {
    return { changedFields: [], previous: {} };
  }
  const old = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const changedFields: string[] = [];
  const previous: Record<string, unknown> = {};
  const compare = (name: string, was: unknown, is: unknown) => {
    if (isDeepStrictEqual(was ?? null, is ?? null)) return;
    changedFields.push(name);
    previous[name] = was ?? null;
  };
  for (const key of Object.keys(now)) {
    if (UNTRACKED_FIELDS.has(key)) continue;
    if (!PER_KEY_FIELDS.has(key)) {
      compare(key, old[key], now[key]);
      continue;
    }
    const was = (old[key] ?? {}) as Record<string, unknown>;
    const is = (now[key] ?? {}) as Record<string, unknown>;
    // Keys are each organisation's own: one a record lacks reads as absent, never as an inherited member (a field
    // named `constructor`).
    const own = (values: Record<string, unknown>, name: string) => (Object.hasOwn(values, name) ? values[name] : null);
    for (const name of new Set([...Object.keys(was), ...Object.keys(is)]))
      compare(`${key}.${name}`, own(was, name), own(is, name));
  }
  return { changedFields, previous };
}

/** Origin of the demo seed: its events are recorded but never delivered, so no seed record reaches an endpoint. */
export const SEED_ORIGIN: WriteOrigin = { isTest: false, deliver: false };

/**
 * A new event id, `evt_<unix_seconds>_<token>` (docs/api-contract.md §6.2), stable across redeliveries; `at` is the
 * event's time, so the id's seconds and its `timestamp` come from the same clock.
 */
export function newEventId(at = new Date()): string {
  return `evt_${Math.floor(at.getTime() / 1000)}_${randomChunk(9).toString("base64url")}`;
}

// Live events recorded in one transaction are handed to Inngest together, in one send, once it has committed.
const HAND_OVER = Symbol("events to hand over after commit");

/** An event as `event_record` (migration 20261126100000_event_sequence) takes it, in a JSON array. */
interface EventRecord {
  id: string;
  name: string;
  resource: string | null;
  resourceId: unknown;
  data: unknown;
  actor: Actor;
  changedFields: string[];
  previous: unknown;
  isTest: boolean;
  /** Stored as already fanned out (`fannedOutAt` = `createdAt`): never handed to Inngest nor delivered. */
  handled: boolean;
  /** ISO 8601: the event's `timestamp`, when the change was recorded (not when it committed). */
  createdAt: string;
}

/**
 * Hands events of organisation `orgId` to the database for the current transaction (`event_record`): they are
 * inserted while `tx` commits, in the order given, numbered with the organisation's next `sequence` numbers under the
 * row lock of its `EventCounter`, held only to the end of that commit (docs/architecture.md, "Events feed").
 */
async function handOverToCommit(
  tx: Prisma.TransactionClient,
  orgId: string,
  events: readonly EventRecord[],
): Promise<void> {
  // Sent and kept as text: the database parses it once, at commit.
  await tx.$executeRaw`SELECT "event_record"(${orgId}, ${JSON.stringify(events)})`;
}

/**
 * Records events in the transactional outbox (docs/architecture.md, "Webhooks and the outbox") as part of the caller's
 * transaction `tx`, so an event exists exactly when its change committed, with what the events feed and webhook
 * payloads carry: the resource (from the event name) and record id, the {@link Actor}, and for changes
 * `changedFields` and `previous`. The rows are written while `tx` commits, numbered in commit order within the
 * organisation (`sequence`; see {@link handOverToCommit}); until then they are not in the table, and a rolled-back
 * savepoint drops the events recorded inside it.
 *
 * Live events are handed to Inngest after the outermost commit (`afterCommit`, server/db/transaction.ts): every event
 * of the transaction in one `inngest.send`, fire-and-forget (see `dispatchEvents`), so the request never waits for
 * Inngest nor fails with it; the sweeper resends whatever was not handed over. Test-key events (docs/api-contract.md
 * §5.6) and seed events are stored with `fannedOutAt` already set: never handed over nor delivered, and out of the
 * sweeper's way. Every event's id and `createdAt` (its payload `timestamp`) come from one reading of this process's
 * clock.
 */
export async function recordEvents(
  tx: Prisma.TransactionClient,
  orgId: string,
  origin: WriteOrigin,
  events: readonly EventInput[],
): Promise<void> {
  if (events.length === 0) return;
  const at = new Date();
  const actor = actorOf(origin);
  const handled = origin.isTest || origin.deliver === false;
  const rows = events.map((event): EventRecord => {
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
      createdAt: at.toISOString(),
    };
  });
  await handOverToCommit(tx, orgId, rows);
  if (handled) return;
  let first = false;
  const pending = transactionLocal(HAND_OVER, () => {
    first = true;
    return [] as Array<{ id: string; orgId: string }>;
  });
  pending.push(...rows.map((row) => ({ id: row.id, orgId })));
  if (first) await afterCommit(() => dispatchEvents(pending));
}

/**
 * Records the `webhook.test` event of "Send test event" ({@link TEST_EVENT_NAME}, data `{message, endpointId}`) in
 * `tx`, numbered at its commit like any event, stored as fanned out (never handed to Inngest); the events feed
 * leaves it out. Its delivery row can only be created once `tx` has committed.
 */
export async function recordTestEvent(
  tx: Prisma.TransactionClient,
  orgId: string,
  origin: WriteOrigin,
  event: { id: string; at: Date; data: { message: string; endpointId: string } },
): Promise<void> {
  await handOverToCommit(tx, orgId, [
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
