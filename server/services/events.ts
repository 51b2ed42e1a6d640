import { randomBytes } from "node:crypto";
import type { Prisma } from "../db/generated/client";
import { afterCommit, transactionLocal } from "../db/transaction";
import { dispatchEvents } from "../webhooks/hand-over";

/** Webhook event names (spec §6.1). */
export const EVENT_NAMES = [
  "account.created",
  "account.updated",
  "account.deleted",
  "contact.created",
  "contact.updated",
  "deal.created",
  "deal.stage_changed",
  "deal.closed_won",
  "deal.closed_lost",
  "device.created",
  "device.updated",
  "device.offline",
  "device.end_of_life",
  "touchpoint.created",
] as const;

/** One of the event names of spec §6.1. */
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Who caused a write: test keys' events are stored but never delivered (spec §5.6, §6); `deliver: false` records
 * events that are never handed to webhooks either (the demo seed: issue #11 B).
 */
export interface WriteOrigin {
  isTest: boolean;
  deliver?: boolean;
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
 * exactly when its change committed. `data` must be the resource exactly as its GET returns it (spec §6.2).
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
  events: ReadonlyArray<{ name: EventName; data: unknown }>,
): Promise<void> {
  if (events.length === 0) return;
  // One statement over a JSON array: Prisma's createMany costs ~70 ms for a 500-event bulk request, this ~5 ms.
  const at = new Date();
  const rows = events.map((event) => ({ id: newEventId(at), name: event.name, data: event.data }));
  const handled = origin.isTest || origin.deliver === false;
  await tx.$executeRawUnsafe(
    `INSERT INTO "Event" ("id", "orgId", "name", "data", "isTest", "createdAt", "fannedOutAt")
     SELECT e->>'id', $1, e->>'name', e->'data', $2, $4::timestamptz AT TIME ZONE 'UTC',
            CASE WHEN $3 THEN $4::timestamptz AT TIME ZONE 'UTC' END
     FROM jsonb_array_elements($5::jsonb) AS e`,
    orgId,
    origin.isTest,
    handled,
    at.toISOString(),
    JSON.stringify(rows),
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
