// Webhook endpoints, their delivery attempts and redelivery as API resources (docs/api-contract.md §2.11, §4.11).
import { z } from "zod";
import { cursorParam, IdSchema, PAGE_SIZE, TimestampSchema } from "./common";
import { EVENT_NAMES, EventNameTextSchema } from "./events";
import {
  DELIVERY_ATTEMPT_EXAMPLE,
  WEBHOOK_ENDPOINT_CREATE_EXAMPLE,
  WEBHOOK_ENDPOINT_CREATED_EXAMPLE,
  WEBHOOK_ENDPOINT_EXAMPLE,
  WEBHOOK_ENDPOINT_UPDATE_EXAMPLE,
  WEBHOOK_SECRET_EXAMPLE,
  WEBHOOK_TEST_EXAMPLE,
} from "./examples";

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

/**
 * What an endpoint can subscribe to: every event name of the feed, or `*` for all of them (docs/api-contract.md §6.1).
 */
export const SUBSCRIBABLE_EVENTS = [...EVENT_NAMES, "*"] as const;

/** One of {@link SUBSCRIBABLE_EVENTS}. */
export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

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
    .describe('Subscribed event names (see the webhook guide), or exactly ["*"] for every event.'),
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
const events = z
  .array(
    z
      .enum(SUBSCRIBABLE_EVENTS, { error: () => `unknown event; expected one of ${EVENT_NAMES.join(", ")}` })
      .describe("An event name, or * for every event."),
  )
  .max(EVENTS_MAX)
  .describe('Event names to subscribe to, or ["*"] for every event; unknown names are refused (422).');
const description = z
  .string()
  .max(WEBHOOK_DESCRIPTION_MAX_LENGTH)
  .nullable()
  .describe("Free text, at most 500 characters; null clears it.");

/** Body of `POST /webhook-endpoints`. */
export const WebhookEndpointCreateSchema = z
  .strictObject({ url, events, description: description.optional() })
  .meta({ id: "WebhookEndpointCreate", examples: [WEBHOOK_ENDPOINT_CREATE_EXAMPLE] });

/** Path and body of `PATCH /webhook-endpoints/{id}`: fields left out keep their value. */
export const WebhookEndpointUpdateSchema = z
  .strictObject({
    id: IdSchema,
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
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
    "The nextCursor of the previous page (opaque). A cursor the service did not make gives 400 bad_request.",
  ),
});

/** The answer of `POST /webhook-endpoints/{id}/test`: the test event's id and its one attempt. */
export const WebhookTestResultSchema = z
  .object({
    eventId: z.string().max(64).describe("Id of the webhook.test event sent."),
    attempt: DeliveryAttemptSchema,
  })
  .meta({ id: "WebhookTestResult", example: WEBHOOK_TEST_EXAMPLE });
