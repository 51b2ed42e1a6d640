// Webhook endpoints, their delivery attempts and redelivery as API resources (docs/api-contract.md §2.11, §4.11).
import { z } from "zod";
import {
  cursorParam,
  DateTimeInputSchema,
  IdSchema,
  ListQueryBase,
  listOf,
  PAGE_SIZE,
  TimestampSchema,
} from "../contract/common";
import {
  DELIVERY_ATTEMPT_EXAMPLE,
  WEBHOOK_ENDPOINT_CREATE_EXAMPLE,
  WEBHOOK_ENDPOINT_CREATED_EXAMPLE,
  WEBHOOK_ENDPOINT_EXAMPLE,
  WEBHOOK_ENDPOINT_UPDATE_EXAMPLE,
  WEBHOOK_REPLAY_CREATE_EXAMPLE,
  WEBHOOK_REPLAY_DRY_RUN_EXAMPLE,
  WEBHOOK_REPLAY_EXAMPLE,
  WEBHOOK_SECRET_EXAMPLE,
  WEBHOOK_TEST_EXAMPLE,
} from "../contract/examples";
import {
  EVENT_NAMES,
  EVENT_RESOURCES,
  type EventName,
  EventNameTextSchema,
  type EventResource,
  MemberRemovedSchema,
} from "../platform/events-feed/schema";
import { AccountSchema } from "../records/accounts/schema";
import { ContactSchema } from "../records/contacts/schema";
import { CustomFieldSchema } from "../records/custom-fields/schema";
import { DealSchema } from "../records/deals/schema";
import { DeviceSchema } from "../records/devices/schema";
import { NoteSchema } from "../records/notes/schema";
import { TaskSchema } from "../records/tasks/schema";
import { TouchpointSchema } from "../records/touchpoints/schema";

/**
 * Most endpoints an organisation can register; `GET /webhook-endpoints` lists them all in one page (docs/architecture.md,
 * "Webhooks and the outbox"). The 101st is refused with 422 `validation_error`.
 */
export const WEBHOOK_ENDPOINTS_MAX = 100;

/**
 * Longest endpoint URL, in characters, as given and as stored (normalised by the WHATWG URL parser; docs/architecture.md,
 * "Webhooks and the outbox").
 */
export const WEBHOOK_URL_MAX_LENGTH = 2_048;

/** Longest endpoint description, in characters (docs/architecture.md, "Webhooks and the outbox"). */
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;

/** What ends a wildcard subscription to every event of one resource: `deal.*` (docs/api-contract.md §6.9). */
export const WILDCARD_SUFFIX = ".*";

/**
 * What an endpoint can subscribe to: every event name of the feed, `<resource>.*` for every event of one resource, or
 * `*` for all of them (docs/api-contract.md §6.1, §6.9).
 */
export type SubscribableEvent = EventName | `${EventResource}.*` | "*";

/** Every {@link SubscribableEvent}: the names, the wildcards by resource, then `*`. */
export const SUBSCRIBABLE_EVENTS = [
  ...EVENT_NAMES,
  ...EVENT_RESOURCES.map((resource): `${EventResource}.*` => `${resource}.*`),
  "*",
] as unknown as readonly [SubscribableEvent, ...SubscribableEvent[]];

/** Most names an endpoint's `changedFields` filter holds (docs/api-contract.md §6.9). */
export const CHANGED_FIELDS_MAX = 20;

/** Longest name in a `changedFields` filter: `customFields.` and a 40-character key fit. */
const CHANGED_FIELD_NAME_MAX = 64;

// Fields of a record that no update ever lists as changed (docs/api-contract.md §6.2); custom fields are named one by one.
const NEVER_CHANGED = new Set(["id", "createdAt", "updatedAt", "customFields"]);

/** Most event names one subscription lists (more than there are names). */
const EVENTS_MAX = 50;

const endpointFields = {
  id: z.string().max(64).describe("Endpoint id, wh_<24 hex>."),
  url: z
    .string()
    .max(WEBHOOK_URL_MAX_LENGTH)
    .meta({ format: "uri" })
    .describe("Absolute http(s) URL deliveries are POSTed to."),
  description: z
    .string()
    .max(WEBHOOK_DESCRIPTION_MAX_LENGTH)
    .nullable()
    .describe("Free text, at most 500 characters; null when none."),
  events: z
    .array(z.enum(SUBSCRIBABLE_EVENTS))
    .max(EVENTS_MAX)
    .describe(
      'Subscribed event names (see the webhook guide) and wildcards by resource (deal.*), or exactly ["*"] for every event.',
    ),
  enabled: z.boolean().describe("false: nothing is delivered until it is enabled again."),
  disabledReason: z
    .string()
    .max(1_000)
    .nullable()
    .describe(
      'Why it was disabled: "disabled by a user", "the receiver answered 410 Gone", or 5 failed deliveries in a row; null while enabled.',
    ),
  disabledAt: TimestampSchema.nullable().describe("When it was disabled (ISO 8601 UTC); null while enabled."),
  consecutiveFailures: z
    .int()
    .min(0)
    .max(1_000_000)
    .describe("Deliveries in a row that ended failed (all 5 attempts); any successful attempt resets it."),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  previousSecretExpiresAt: TimestampSchema.nullable().describe(
    "Until when the secret before the last rotation also signs deliveries (24 h after the rotation); null otherwise.",
  ),
  changedFields: z
    .array(z.string().max(CHANGED_FIELD_NAME_MAX))
    .max(CHANGED_FIELDS_MAX)
    .nullable()
    .describe(
      "Only *.updated events that changed at least one of these fields are delivered (creations, deletions and the other events always are); null: no such filter.",
    ),
};

/** A webhook endpoint as the API returns it: never its secret. */
export const WebhookEndpointSchema = z
  .object(endpointFields)
  .meta({ id: "WebhookEndpoint", example: WEBHOOK_ENDPOINT_EXAMPLE });

/** A created endpoint: the endpoint and its signing secret, shown this once. */
export const WebhookEndpointCreatedSchema = z
  .object({
    ...endpointFields,
    secret: z
      .string()
      .max(100)
      .describe(
        "Signing secret whsec_<base64>, shown only in this answer (and after a rotation): store it to verify deliveries.",
      ),
  })
  .meta({ id: "WebhookEndpointCreated", example: WEBHOOK_ENDPOINT_CREATED_EXAMPLE });

const url = z
  .string()
  .max(WEBHOOK_URL_MAX_LENGTH)
  .meta({ format: "uri" })
  .describe("Absolute http(s) URL, at most 2,048 characters, not a private address.");
const subscribable = z
  .enum(SUBSCRIBABLE_EVENTS, {
    error: () => `unknown event; expected one of ${SUBSCRIBABLE_EVENTS.join(", ")}`,
  })
  .describe("An event name, <resource>.* for every event of a resource, or * for every event.");
const events = z
  .array(subscribable)
  .max(EVENTS_MAX)
  .describe(
    'Event names and wildcards by resource (deal.*) to subscribe to, or ["*"] for every event; unknown names are refused (422).',
  );
const changedFields = z
  .array(
    z
      .string()
      .max(CHANGED_FIELD_NAME_MAX)
      .regex(
        /^(?:[A-Za-z][A-Za-z0-9]{0,63}|customFields\.[a-z][a-z0-9_]{0,39})$/,
        "must be a field name or customFields.<key>",
      )
      .describe("A field of a subscribed resource, or customFields.<key>."),
  )
  .max(CHANGED_FIELDS_MAX)
  .nullable()
  .describe(
    `At most ${CHANGED_FIELDS_MAX} fields: *.updated events are delivered only when they changed one of them (creations, deletions and the other events always are). Each is a field of a subscribed resource as its GET returns it (id, createdAt and updatedAt never change), or customFields.<key> for a custom field (key: a lower-case letter, then up to 39 lower-case letters, digits or underscores; it need not be defined yet). null or [] removes the filter.`,
  );
const description = z
  .string()
  .max(WEBHOOK_DESCRIPTION_MAX_LENGTH)
  .nullable()
  .describe("Free text, at most 500 characters; null clears it.");

/** Body of `POST /webhook-endpoints`. */
export const WebhookEndpointCreateSchema = z
  .strictObject({ url, events, description: description.optional(), changedFields: changedFields.optional() })
  .meta({ id: "WebhookEndpointCreate", examples: [WEBHOOK_ENDPOINT_CREATE_EXAMPLE] });

/** Path and body of `PATCH /webhook-endpoints/{id}`: fields left out keep their value. */
export const WebhookEndpointUpdateSchema = z
  .strictObject({
    id: IdSchema,
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    changedFields: changedFields.optional(),
    enabled: z
      .boolean()
      .optional()
      .describe("true enables it (clearing the failure count and reason); false disables it by the user."),
  })
  .meta({ id: "WebhookEndpointUpdate", examples: [WEBHOOK_ENDPOINT_UPDATE_EXAMPLE] });

/** The answer of `POST /webhook-endpoints/{id}/rotate-secret`. */
export const WebhookSecretSchema = z
  .object({
    secret: z.string().max(100).describe("The new signing secret, shown this once."),
    previousSecretExpiresAt: TimestampSchema.describe(
      "Until when the old secret also signs every delivery (a second v1= value): 24 hours from now.",
    ),
  })
  .meta({ id: "WebhookSecret", example: WEBHOOK_SECRET_EXAMPLE });

/** What made a delivery attempt, as the API names it (docs/api-contract.md §2.11). */
export const ATTEMPT_TRIGGERS = ["scheduled", "manual", "test", "replay"] as const;

/** One of {@link ATTEMPT_TRIGGERS}. */
export type AttemptTriggerName = (typeof ATTEMPT_TRIGGERS)[number];

/** One delivery attempt. */
export const DeliveryAttemptSchema = z
  .object({
    attemptId: z.string().max(20).describe("Opaque, increasing with time."),
    deliveryId: z
      .string()
      .max(64)
      .describe("The delivery (one event to one endpoint), whd_<24 hex>: redeliver it by this id."),
    eventId: z.string().max(64).describe("evt_<unix_seconds>_<token>: the same on every attempt and redelivery."),
    event: EventNameTextSchema.describe("Event name (webhook.test for test events)."),
    attempt: z.int().min(1).max(1_000_000).describe("1-based number within the delivery, redeliveries included."),
    url: z
      .string()
      .max(WEBHOOK_URL_MAX_LENGTH)
      .meta({ format: "uri" })
      .nullable()
      .describe(
        "The URL this attempt was POSTed to: the endpoint's URL at that moment, which may differ from its URL now. Null for attempts made before the service kept it.",
      ),
    responseStatus: z
      .int()
      .min(100)
      .max(599)
      .nullable()
      .describe("HTTP status of the receiver's answer; null when none came (timeout, refused, blocked address)."),
    success: z.boolean().describe("true for a 2xx answer."),
    durationMs: z.int().min(0).max(3_600_000).describe("How long the attempt took, in milliseconds."),
    error: z.string().max(1_000).nullable().describe("Why it failed, when it did; null on success."),
    startedAt: TimestampSchema.describe("When the attempt started (ISO 8601 UTC)."),
    trigger: z
      .enum(ATTEMPT_TRIGGERS)
      .describe(
        "What made the attempt: scheduled (the retry schedule), manual (a redelivery), test (a test event) or replay (a replay of failed deliveries; its id in replayId). Attempts made before this field existed are scheduled.",
      ),
    replayId: z
      .string()
      .max(64)
      .nullable()
      .describe("The replay that made the attempt (whr_<24 hex>); null for every other attempt."),
  })
  .meta({ id: "DeliveryAttempt", example: DELIVERY_ATTEMPT_EXAMPLE });

/** Query of `GET /webhook-endpoints/{id}/deliveries`. */
export const DeliveryListQuerySchema = z.strictObject({
  id: IdSchema,
  limit: z
    .int()
    .min(1)
    .max(PAGE_SIZE.max)
    .default(PAGE_SIZE.default)
    .describe(`Page size, 1 to ${PAGE_SIZE.max}; default ${PAGE_SIZE.default}.`),
  cursor: cursorParam(
    "The nextCursor of the previous page: an attemptId of this endpoint, after which the page continues (a signed cursor answered before works too). Anything else, or an attempt this endpoint does not have, gives 400 bad_request.",
  ),
});

/** The answer of `POST /webhook-endpoints/{id}/test`: the test event's id and its one attempt. */
export const WebhookTestResultSchema = z
  .object({
    eventId: z.string().max(64).describe("Id of the webhook.test event sent."),
    attempt: DeliveryAttemptSchema,
  })
  .meta({ id: "WebhookTestResult", example: WEBHOOK_TEST_EXAMPLE });

/**
 * The fields of a resource's record that an update can list in `changedFields` (docs/api-contract.md §6.2, §6.9), read
 * from the zod schema its GET answers with (so a new field is filterable without a list to keep), less `id`,
 * `createdAt` and `updatedAt`, which never change, and `customFields`, whose keys are named one by one
 * (`customFields.<key>`).
 */
export function resourceFields(resource: EventResource): string[] {
  const schemas: Record<EventResource, z.ZodObject> = {
    account: AccountSchema,
    contact: ContactSchema,
    deal: DealSchema,
    device: DeviceSchema,
    task: TaskSchema,
    note: NoteSchema,
    touchpoint: TouchpointSchema,
    custom_field: CustomFieldSchema,
    webhook_endpoint: WebhookEndpointSchema,
    member: MemberRemovedSchema,
  };
  return Object.keys(schemas[resource].shape).filter((field) => !NEVER_CHANGED.has(field));
}

/** Most deliveries one replay sends (docs/api-contract.md §6.10): more is 422 with the count. */
export const REPLAY_MAX_MATCHED = 10_000;

/** What a replay sends (docs/api-contract.md §6.10). */
export const REPLAY_STATUSES = ["failed", "missing"] as const;

/** States of a replay, as the API names them. */
export const REPLAY_STATES = ["running", "completed", "cancelled", "stopped"] as const;

const replayTimestamp = DateTimeInputSchema;

/** Body (and path) of `POST /webhook-endpoints/{id}/replays`. */
export const WebhookReplayCreateSchema = z
  .strictObject({
    id: IdSchema,
    since: replayTimestamp.describe(
      "Replay what happened from this time on (ISO 8601 with a time zone): events recorded at or after it. It must be within the events' retention (30 days by default).",
    ),
    until: replayTimestamp
      .describe("...and before this time (exclusive); default: now. Must be after since.")
      .optional(),
    statuses: z
      .array(z.enum(REPLAY_STATUSES).describe("failed or missing."))
      .min(1)
      .max(REPLAY_STATUSES.length)
      .default(["failed"])
      .describe(
        'What to send: "failed", the deliveries that failed and have not succeeded since (one per event); "missing", the events that match the endpoint\'s subscription and filter but were never delivered to it (while it was disabled). Default ["failed"].',
      ),
    events: z
      .array(subscribable)
      .min(1)
      .max(EVENTS_MAX)
      .describe("Only these events: names, <resource>.* or *. Default: every event.")
      .optional(),
    dryRun: z
      .boolean()
      .default(false)
      .describe("true: send nothing and answer 200 with the number of deliveries the replay would send."),
  })
  .meta({ id: "WebhookReplayCreate", examples: [WEBHOOK_REPLAY_CREATE_EXAMPLE] });

/** A replay of an endpoint's failed (and missing) deliveries (docs/api-contract.md §6.10). */
export const WebhookReplaySchema = z
  .object({
    id: z.string().max(64).describe("Replay id, whr_<24 hex>."),
    endpointId: z.string().max(64).describe("The endpoint it sends to."),
    status: z
      .enum(REPLAY_STATES)
      .describe(
        "running: sending, at most 10 deliveries a second; completed: every matched delivery was sent once; cancelled: cancelled before the end; stopped: the endpoint was disabled or could not be sent to (reason says why).",
      ),
    since: TimestampSchema,
    until: TimestampSchema,
    statuses: z.array(z.enum(REPLAY_STATUSES)).max(REPLAY_STATUSES.length).describe("What it sends."),
    events: z
      .array(z.enum(SUBSCRIBABLE_EVENTS))
      .max(EVENTS_MAX)
      .nullable()
      .describe("The events it is limited to; null: every event."),
    matched: z
      .int()
      .min(0)
      .max(REPLAY_MAX_MATCHED)
      .describe("Deliveries it sends, fixed when it was created (oldest event first)."),
    sent: z.int().min(0).max(REPLAY_MAX_MATCHED).describe("Sent so far."),
    succeeded: z
      .int()
      .min(0)
      .max(REPLAY_MAX_MATCHED)
      .describe("Of those sent, how many the receiver answered with a 2xx."),
    reason: z.string().max(1_000).nullable().describe("Why it stopped before the end; null otherwise."),
    createdAt: TimestampSchema,
    finishedAt: TimestampSchema.nullable().describe("When it completed, was cancelled or stopped; null while running."),
  })
  .meta({ id: "WebhookReplay", example: WEBHOOK_REPLAY_EXAMPLE });

/** The answer of a dry run: how many deliveries the replay would send. */
export const WebhookReplayDryRunSchema = z
  .object({
    dryRun: z.literal(true).describe("Always true: nothing was sent."),
    matched: z
      .int()
      .min(0)
      .max(1_000_000_000)
      .describe(
        `Deliveries the replay would send; more than ${REPLAY_MAX_MATCHED.toLocaleString("en")} cannot be replayed at once.`,
      ),
    since: TimestampSchema,
    until: TimestampSchema.describe("The end of the window, now when none was given."),
  })
  .meta({ id: "WebhookReplayDryRun", example: WEBHOOK_REPLAY_DRY_RUN_EXAMPLE });

/** Path of one replay. */
export const WebhookReplayPathSchema = z.strictObject({
  id: IdSchema,
  replayId: IdSchema.describe("Replay id, whr_<24 hex>."),
});

/** Query of `GET /webhook-endpoints/{id}/replays`. */
export const WebhookReplayListQuerySchema = z.strictObject({
  id: IdSchema,
  limit: ListQueryBase.limit,
  cursor: ListQueryBase.cursor,
});

/** A page of an endpoint's replays, newest first. */
export const WebhookReplayListSchema = listOf(WebhookReplaySchema);
