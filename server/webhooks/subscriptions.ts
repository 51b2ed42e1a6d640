// What an endpoint receives (docs/api-contract.md §6.9; docs/architecture.md, "Webhooks and the outbox"): event names,
// wildcards by resource (`deal.*`) or `*`, and for `*.updated` events an optional filter on the fields they changed.
// The same rules in TypeScript (validation, the waiting list) and in SQL (fan-out, replays), kept side by side here.
import { Prisma } from "../db/generated/client";
import type { ErrorDetail } from "../errors";
import { EVENT_NAMES, EVENT_RESOURCES, type EventResource } from "../platform/events-feed/schema";
import { CUSTOM_FIELD_KEY } from "../records/custom-fields/schema";
import { CHANGED_FIELDS_MAX, resourceFields, SUBSCRIBABLE_EVENTS, WILDCARD_SUFFIX } from "./schema";

/** The subscription that matches every event of docs/api-contract.md §6.1. */
export const ALL_EVENTS = "*";

const SUBSCRIBABLE = new Set<string>(SUBSCRIBABLE_EVENTS);

/** The resource of an event name (`deal` of `deal.closed_won`). */
function resourceOf(name: string): string {
  return name.slice(0, name.indexOf("."));
}

/**
 * Whether a subscription (`events` of an endpoint: names, `<resource>.*` wildcards, or `["*"]`) takes the event
 * `name`. The SQL twin is {@link subscriptionMatchesSql}.
 */
export function subscriptionMatches(events: readonly string[], name: string): boolean {
  return (
    events.includes(ALL_EVENTS) || events.includes(name) || events.includes(`${resourceOf(name)}${WILDCARD_SUFFIX}`)
  );
}

/**
 * SQL condition: the subscription array `events` takes the event name `name` (both SQL expressions, e.g.
 * `w."events"` and `e."name"`); the same rule as {@link subscriptionMatches}.
 */
export function subscriptionMatchesSql(events: Prisma.Sql, name: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(${name} = ANY(${events}) OR '*' = ANY(${events}) OR (split_part(${name}, '.', 1) || '.*') = ANY(${events}))`;
}

/**
 * Whether an event passes an endpoint's `changedFields` filter (docs/api-contract.md §6.9): with no filter (empty),
 * every event does; with one, an event whose name ends in `.updated` passes only when it changed one of the fields,
 * and every other event (creations, deletions, stage changes, …) passes. The SQL twin is {@link changedFieldsPassSql}.
 */
export function passesChangedFields(filter: readonly string[], name: string, changed: readonly string[]): boolean {
  if (filter.length === 0 || !name.endsWith(".updated")) return true;
  return changed.some((field) => filter.includes(field));
}

/** SQL condition of {@link passesChangedFields}: `filter` the endpoint's array, `name` and `changed` the event's. */
export function changedFieldsPassSql(filter: Prisma.Sql, name: Prisma.Sql, changed: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(coalesce(cardinality(${filter}), 0) = 0 OR ${name} NOT LIKE '%.updated' OR ${changed} && ${filter})`;
}

/** The resources a subscription covers: every one for `*`, else those of its names and wildcards. */
export function subscribedResources(events: readonly string[]): EventResource[] {
  if (events.includes(ALL_EVENTS)) return [...EVENT_RESOURCES];
  const named = new Set(events.map(resourceOf));
  return EVENT_RESOURCES.filter((resource) => named.has(resource));
}

/**
 * Checks a subscription (docs/api-contract.md §2.11): a non-empty list of event names of §6.1 and `<resource>.*`
 * wildcards (duplicates dropped), or exactly `["*"]`. Problems are pushed onto `details`.
 * @returns the subscription to store, or undefined when it is refused.
 */
export function checkEvents(value: unknown, details: ErrorDetail[]): string[] | undefined {
  const expected = `event names (${EVENT_NAMES.join(", ")}), <resource>.* wildcards (${EVENT_RESOURCES.map((r) => `${r}${WILDCARD_SUFFIX}`).join(", ")}), or exactly ["*"]`;
  if (!Array.isArray(value) || value.length === 0) {
    details.push({ path: ["events"], message: `must be a non-empty list of ${expected}` });
    return undefined;
  }
  const events = [...new Set(value as unknown[])];
  if (events.includes(ALL_EVENTS)) {
    if (events.length > 1) details.push({ path: ["events"], message: `"*" cannot be combined with event names` });
    return [ALL_EVENTS];
  }
  value.forEach((name: unknown, index: number) => {
    if (typeof name !== "string" || !SUBSCRIBABLE.has(name))
      details.push({
        path: ["events", String(index)],
        message: `unknown event; expected one of ${[...SUBSCRIBABLE].join(", ")}`,
      });
  });
  return events as string[];
}

/**
 * Checks an endpoint's `changedFields` filter against its subscription (docs/api-contract.md §6.9): null or an empty
 * list means no filter; otherwise 1 to 20 distinct names, each a field of a subscribed resource as its GET returns it
 * (read from the resource's zod schema; `id`, `createdAt` and `updatedAt` never change, so they are refused) or a
 * custom field `customFields.<key>` (key `^[a-z][a-z0-9_]{0,39}$`, accepted whether or not it is defined yet).
 * Problems are pushed onto `details`.
 * @returns the filter to store (`[]` for none), or undefined when it is refused.
 */
export function checkChangedFields(
  value: unknown,
  events: readonly string[],
  details: ErrorDetail[],
): string[] | undefined {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value) || value.length > CHANGED_FIELDS_MAX) {
    details.push({
      path: ["changedFields"],
      message: `must be null or a list of at most ${CHANGED_FIELDS_MAX} field names`,
    });
    return undefined;
  }
  const resources = subscribedResources(events);
  const known = new Map<string, string[]>();
  for (const resource of resources) {
    for (const field of resourceFields(resource)) known.set(field, [...(known.get(field) ?? []), resource]);
  }
  const fields = [...new Set(value as unknown[])];
  value.forEach((field: unknown, index: number) => {
    if (typeof field !== "string") {
      details.push({ path: ["changedFields", String(index)], message: "must be a field name" });
      return;
    }
    if (field.startsWith("customFields.")) {
      if (!CUSTOM_FIELD_KEY.test(field.slice("customFields.".length)))
        details.push({
          path: ["changedFields", String(index)],
          message:
            "a custom field is customFields.<key> with a key of a lower-case letter, then up to 39 letters, digits or underscores",
        });
      return;
    }
    if (!known.has(field))
      details.push({
        path: ["changedFields", String(index)],
        message: `is not a field of ${resources.length > 0 ? resources.join(", ") : "the subscribed resources"} that an update can change`,
      });
  });
  return fields as string[];
}
