// The events feed and the payload shared with webhooks (docs/api-contract.md §6.2).
import { z } from "zod";
import { CURSOR_MAX_LENGTH, cursorParam, DATE_TIME_MAX_LENGTH, PAGE_SIZE } from "../../contract/common";
import { EVENT_EXAMPLE, EVENT_PAGE_EXAMPLE } from "../../contract/examples";

/**
 * Event names: those of docs/api-contract.md §6.1, then the extensions marked there, so that the events feed carries
 * every change of every resource (updates of deals outside a stage change, tasks, notes, and hard deletions). Webhook
 * endpoints subscribe to any of them, to `<resource>.*` or to `*` for all. `webhook_endpoint.disabled` is recorded when the
 * service disables an endpoint after failures (docs/api-contract.md §6.5); `member.removed` when a member leaves the
 * organisation's team, removed by hand or deprovisioned by its directory (docs/api-contract.md §11.5).
 */
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
  "deal.updated",
  "deal.deleted",
  "device.deleted",
  "task.created",
  "task.updated",
  "task.deleted",
  "note.created",
  "note.deleted",
  "touchpoint.deleted",
  "contact.erased",
  "custom_field.created",
  "custom_field.updated",
  "custom_field.archived",
  "webhook_endpoint.disabled",
  "member.removed",
] as const;

/** One of {@link EVENT_NAMES}. */
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Name of the event sent by "Send test event" (settings) and `POST /webhook-endpoints/{id}/test`: not part of the feed
 * nor of {@link EVENT_NAMES}; receivers should accept and ignore names they do not know. Its data is
 * `{message, endpointId}`.
 */
export const TEST_EVENT_NAME = "webhook.test";

/**
 * An event name in an answer (the feed, delivery attempts): text of at most 100 characters, documented as the enum of
 * {@link EVENT_NAMES} and {@link TEST_EVENT_NAME}, the only names the services record (docs/api-contract.md §6.1).
 */
export const EventNameTextSchema = z
  .string()
  .max(100)
  .meta({ enum: [...EVENT_NAMES, TEST_EVENT_NAME] });

/**
 * Resources the events feed reports on: the first part of every event name. `webhook_endpoint` has one event, the
 * service disabling an endpoint (docs/api-contract.md §6.1); `member` one too, a member leaving the team (§11.5).
 */
export const EVENT_RESOURCES = [
  "account",
  "contact",
  "deal",
  "device",
  "task",
  "note",
  "touchpoint",
  "custom_field",
  "webhook_endpoint",
  "member",
] as const;

/** One of {@link EVENT_RESOURCES}. */
export type EventResource = (typeof EVENT_RESOURCES)[number];

/**
 * Who caused an event (docs/api-contract.md §6.2): an API key, a settings user, or the system (demo seed, scheduled
 * jobs).
 */
export const ActorSchema = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("api_key").describe("An API key made the request."),
      id: z.string().max(64).describe("Id of the API key that made the request."),
    }),
    z.object({
      type: z.literal("user").describe("A person in the settings area."),
      id: z.string().max(64).describe("Id of the settings user."),
    }),
    z.object({ type: z.literal("system").describe("The service itself: the demo seed or a scheduled job.") }),
  ])
  .describe(
    "Who caused the change: {type: api_key, id} for a request with an API key (compare id with your own key's to drop the echoes of your own writes), {type: user, id} for a person in the settings area, {type: system} for the demo seed and scheduled jobs.",
  )
  .meta({ id: "Actor" });

/** The Actor type. */
export type Actor = z.infer<typeof ActorSchema>;

/**
 * One event: the webhook payload of docs/api-contract.md §6.2 (`id`, `event`, `timestamp`, `orgId`, `data`) with
 * `sequence` (its position in the organisation's feed, in commit order: docs/architecture.md, "Events feed"),
 * `resource`, `actor`, and for changes of an existing record `changedFields` and `previous`.
 */
export const EventSchema = z
  .object({
    id: z
      .string()
      .max(64)
      .describe("Event id, evt_<unix_seconds>_<token>: the same in the feed, on every delivery and redelivery."),
    event: EventNameTextSchema.describe(
      "Event name, e.g. account.updated; webhook.test only in test deliveries, never in the feed.",
    ),
    sequence: z
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .describe(
        "Position of the event in its organisation's feed: increasing in the order the changes committed within the organisation, the same in the feed and in every webhook delivery. Two events of the same record: the one with the larger sequence carries the newer state, so a receiver that gets webhooks out of order (retries) keeps, per record, the data of the largest sequence it has seen and discards older ones. Numbers are not contiguous for a subscriber: other records, event types it does not receive and webhook test events take numbers too. Compare sequences only within one organisation.",
      ),
    timestamp: z.iso
      .datetime()
      .max(DATE_TIME_MAX_LENGTH)
      .describe("When the change was recorded: ISO 8601 UTC with milliseconds."),
    orgId: z.string().max(64).describe("Owning organisation."),
    resource: z
      .enum(EVENT_RESOURCES)
      .nullable()
      .describe("The resource the event is about; null only for webhook test events."),
    actor: ActorSchema,
    data: z
      .record(z.string().max(64), z.unknown())
      .describe(
        "The record after the change, exactly as its GET returns it; for a hard deletion (and contact.erased) a tombstone {id, resource, deleted: true} with the record's external key where it has one (externalId of an account, rmmAgentId of a device).",
      ),
    changedFields: z
      .array(z.string().max(64))
      .max(128)
      .optional()
      .describe(
        "Present when an existing record changed (updates, soft deletion, stage changes, offline and end-of-life, archiving a custom field): the fields whose values changed, updatedAt left out; a custom field value is named customFields.<key>.",
      ),
    previous: z
      .record(z.string().max(64), z.unknown())
      .optional()
      .describe(
        "Present with changedFields: the values those fields had before the change, keyed as changedFields names them (customFields.<key> for a custom field value, null when it had none).",
      ),
  })
  .meta({ id: "Event", example: EVENT_EXAMPLE });

/** An event as the feed and webhook deliveries carry it. */
export type EventPayload = z.infer<typeof EventSchema>;

/**
 * Query of `GET /events` (docs/api-contract.md §4.10): `limit` (1–100, default 50), `cursor` (the opaque `nextCursor`
 * of an earlier page, or an event's id), `types` (comma-separated event names), `resource`.
 */
export const EventListQuerySchema = z.strictObject({
  limit: z
    .int()
    .min(1)
    .max(PAGE_SIZE.max)
    .default(PAGE_SIZE.default)
    .describe(`Page size, 1 to ${PAGE_SIZE.max}; default ${PAGE_SIZE.default}.`),
  cursor: cursorParam(
    "The nextCursor of an earlier page (opaque, signed), or the id of an event of the feed. Continues right after the last event that page returned (or that event), in commit order (sequence). A cursor older than the retention period gives 410 cursor_expired (list the resources again, then follow the feed from its start); a string this feed did not make for this organisation, or the id of no event of its feed, gives 400 bad_request (start without a cursor). Unsigned cursors made before cursors were signed still work while the event they name is kept; the page answers with a signed one, so keep the new nextCursor.",
  ),
  types: z
    .string()
    .max(2_000)
    .regex(/^[a-z_]+\.[a-z_]+(,[a-z_]+\.[a-z_]+)*$/, "must be comma-separated event names")
    .refine(
      (value) => value.split(",").every((name) => (EVENT_NAMES as readonly string[]).includes(name)),
      "names an unknown event",
    )
    .describe("Only these events: comma-separated event names, e.g. account.updated,deal.closed_won.")
    .meta({ example: "account.created,account.updated,account.deleted" })
    .optional(),
  resource: z.enum(EVENT_RESOURCES).describe("Only events about this resource.").optional(),
});

/** Parsed query of `GET /events`. */
export type EventListQuery = z.infer<typeof EventListQuerySchema>;

/** A page of the events feed: `nextCursor` is present on the last page too, to continue from later. */
export const EventListSchema = z
  .object({
    data: z.array(EventSchema).max(PAGE_SIZE.max),
    hasMore: z.boolean().describe("true when more events are exist now; false on the last page."),
    nextCursor: z
      .string()
      .max(CURSOR_MAX_LENGTH)
      .nullable()
      .describe(
        "Pass as cursor to continue after this page. Present on the last page too (poll it later for newer events); null only when the feed is empty and no cursor was given.",
      ),
  })
  .meta({ example: EVENT_PAGE_EXAMPLE });

/**
 * The `data` of a `member.removed` event (docs/api-contract.md §6.1, §11.5): a tombstone of the membership with who it
 * was, the role they had and what ended it (`manual`: an owner or admin, or the operator command; `directory`: the
 * organisation's SCIM directory deprovisioned them).
 */
export const MemberRemovedSchema = z
  .object({
    id: z.string().describe("The membership's id"),
    resource: z.literal("member"),
    deleted: z.literal(true),
    email: z.string().describe("The person's email, lower-case"),
    role: z.string().describe("The role they had: owner, admin, developer or viewer"),
    source: z.enum(["manual", "directory"]),
  })
  .meta({ id: "MemberRemoved" });
