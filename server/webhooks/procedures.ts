import { z } from "zod";
import { IdSchema, listOf } from "../contract/common";
import type { ApiKeyActor } from "../identity/audit-trail/service";
import type { ApiKeyPrincipal } from "../platform/api-keys/service";
import { apiProcedure, router } from "../trpc";
import { listDeliveryAttempts, redeliver } from "./deliveries";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhookEndpointEnabled,
  updateWebhookEndpoint,
} from "./endpoints";
import { cancelReplay, countReplay, getReplay, listReplays, type ReplayRequester, startReplay } from "./replays";
import {
  DeliveryAttemptSchema,
  DeliveryListQuerySchema,
  REPLAY_MAX_MATCHED,
  WEBHOOK_ENDPOINTS_MAX,
  WebhookEndpointCreatedSchema,
  WebhookEndpointCreateSchema,
  WebhookEndpointSchema,
  WebhookEndpointUpdateSchema,
  WebhookReplayCreateSchema,
  WebhookReplayDryRunSchema,
  WebhookReplayListQuerySchema,
  WebhookReplayListSchema,
  WebhookReplayPathSchema,
  WebhookReplaySchema,
  WebhookSecretSchema,
  WebhookTestResultSchema,
} from "./schema";

const tags = ["Webhooks"];
const RULES =
  'The URL must be an absolute http(s) URL without credentials whose host is not, and does not resolve to, a private, loopback, link-local or metadata address (checked again at every delivery); events are names from the webhook guide, wildcards by resource (deal.*) or ["*"]; changedFields (at most 20, null for none) names fields of the subscribed resources or customFields.<key>, and limits *.updated events to those that changed one of them. A refusal is 422 naming the field and the reason. The same rules and services as the settings area.';

/** Who starts or cancels a replay through the API: the key, as the replay's actor and in the settings audit trail. */
function keyRequester(ctx: { principal: ApiKeyPrincipal; auditActor: ApiKeyActor }): ReplayRequester {
  const { principal, auditActor } = ctx;
  return { actor: { type: "api_key", id: principal.apiKeyId }, audit: auditActor, isTest: principal.isTest };
}

/** A row with its dates as the API serialises them (ISO 8601 strings). */
type Serialised<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/** Timestamps as the API serialises them. */
function iso<T extends object>(row: T): Serialised<T> {
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]),
  ) as Serialised<T>;
}

/**
 * Webhook endpoints, their deliveries and redelivery as API resources (docs/api-contract.md §4.11), so an automation
 * platform can subscribe itself (REST hooks). Thin: every rule lives in `server/webhooks/`. Errors: 400, 401, 403, 404,
 * 422 as documented per operation in OpenAPI.
 */
export const webhookEndpointsRouter = router({
  /** `GET /webhook-endpoints` (webhooks:read): every endpoint of the organisation, newest first, in one page. */
  list: apiProcedure("webhooks:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook-endpoints",
        tags,
        summary: "List webhook endpoints",
        description: `Every endpoint of the organisation, newest first, in one page (hasMore is always false): an organisation has at most ${WEBHOOK_ENDPOINTS_MAX}. Secrets are never shown here.`,
      },
      envelope: "list",
    })
    .input(z.void())
    .output(
      z.object({
        data: z.array(WebhookEndpointSchema).max(WEBHOOK_ENDPOINTS_MAX),
        hasMore: z.boolean().describe("Always false: every endpoint is on this page."),
        nextCursor: z.null().describe("Always null."),
      }),
    )
    .query(async ({ ctx }) => ({
      data: (await listWebhookEndpoints(ctx.principal.orgId)).map((endpoint) => iso(endpoint)),
      hasMore: false,
      nextCursor: null,
    })),

  /** `POST /webhook-endpoints` (webhooks:write): registers an endpoint, 201, showing its secret once. */
  create: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints",
        tags,
        summary: "Create a webhook endpoint",
        description: `Registers an endpoint for the given events and answers 201 with it and its signing secret, shown only in this answer. ${RULES}`,
      },
      successStatus: 201,
      secretInAnswer: true,
    })
    .input(WebhookEndpointCreateSchema)
    .output(WebhookEndpointCreatedSchema)
    .mutation(async ({ ctx, input }) => {
      const { endpoint, secret } = await createWebhookEndpoint(ctx.principal.orgId, input, ctx.auditActor);
      return { ...iso(endpoint), secret };
    }),

  /** `GET /webhook-endpoints/{id}` (webhooks:read). */
  get: apiProcedure("webhooks:read")
    .meta({
      openapi: { method: "GET", path: "/webhook-endpoints/{id}", tags, summary: "Get a webhook endpoint" },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(WebhookEndpointSchema)
    .query(async ({ ctx, input }) => iso(await getWebhookEndpoint(ctx.principal.orgId, input.id))),

  /** `PATCH /webhook-endpoints/{id}` (webhooks:write): URL, events, description, enabled. */
  update: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/webhook-endpoints/{id}",
        tags,
        summary: "Update a webhook endpoint",
        description: `Changes the URL, events or description, and enables or disables the endpoint; fields left out keep their value. Enabling clears the failure count and reason; deliveries recorded while it was disabled are not sent. ${RULES}`,
      },
    })
    .input(WebhookEndpointUpdateSchema)
    .output(WebhookEndpointSchema)
    .mutation(async ({ ctx, input }) => {
      const { id, enabled, ...changes } = input;
      const orgId = ctx.principal.orgId;
      const actor = ctx.auditActor;
      let endpoint = await updateWebhookEndpoint(orgId, id, changes, actor);
      if (enabled !== undefined) endpoint = await setWebhookEndpointEnabled(orgId, id, enabled, actor);
      return iso(endpoint);
    }),

  /** `DELETE /webhook-endpoints/{id}` (webhooks:write): removes it with its delivery history. */
  delete: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "DELETE",
        path: "/webhook-endpoints/{id}",
        tags,
        summary: "Delete a webhook endpoint",
        description: "Removes the endpoint with its deliveries and their attempts, and answers { id, deleted: true }.",
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(
      z
        .object({
          id: z.string().max(64).describe("The deleted endpoint's id."),
          deleted: z.literal(true).describe("Always true."),
        })
        .meta({ example: { id: "wh_5f2c9d0e1a7b4c3d8e6f0a12", deleted: true } }),
    )
    .mutation(async ({ ctx, input }) => {
      await deleteWebhookEndpoint(ctx.principal.orgId, input.id, ctx.auditActor);
      return { id: input.id, deleted: true as const };
    }),

  /** `POST /webhook-endpoints/{id}/rotate-secret` (webhooks:write): a new secret; the old one signs 24 h more. */
  rotateSecret: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints/{id}/rotate-secret",
        tags,
        summary: "Rotate the signing secret",
        description:
          "Replaces the signing secret and shows the new one once. For 24 hours every delivery is signed with both (two v1= values in Service-Signature, two signatures in webhook-signature), so receivers can switch without losing deliveries; a second rotation within those 24 hours drops the oldest secret at once.",
      },
      secretInAnswer: true,
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(WebhookSecretSchema)
    .mutation(async ({ ctx, input }) => iso(await rotateWebhookSecret(ctx.principal.orgId, input.id, ctx.auditActor))),

  /** `POST /webhook-endpoints/{id}/test` (webhooks:write): sends a webhook.test event now and answers the attempt. */
  test: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints/{id}/test",
        tags,
        summary: "Send a test event",
        description:
          "Sends one webhook.test event to the endpoint now, whatever its subscriptions and enabled state, signed like every delivery, waits for the attempt (at most 10 seconds) and answers with it: HTTP status, duration, error. The event carries this key as its actor; it is not part of the events feed. Test keys send no webhooks: a msp_test_ key is refused with 403 insufficient_scope.",
      },
      ownTransactions: true,
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(WebhookTestResultSchema)
    .mutation(async ({ ctx, input }) => {
      const sent = await sendTestEvent(ctx.principal.orgId, input.id, ctx.principal, ctx.auditActor);
      return { eventId: sent.eventId, attempt: iso(sent.attempt) };
    }),

  /** `GET /webhook-endpoints/{id}/deliveries` (webhooks:read): the attempts made to it, newest first. */
  deliveries: apiProcedure("webhooks:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook-endpoints/{id}/deliveries",
        tags,
        summary: "List delivery attempts",
        description:
          "Every attempt made to the endpoint, newest first, keyset-paged (limit, cursor, hasMore, nextCursor): time, HTTP status, duration in ms and the error. Redeliver one by its deliveryId.",
      },
      envelope: "list",
    })
    .input(DeliveryListQuerySchema)
    .output(listOf(DeliveryAttemptSchema))
    .query(async ({ ctx, input }) => {
      const page = await listDeliveryAttempts(ctx.principal.orgId, input.id, {
        limit: input.limit,
        cursor: input.cursor,
      });
      return { ...page, data: page.data.map((attempt) => iso(attempt)) };
    }),

  /** `POST /deliveries/{id}/redeliver` (webhooks:write): sends a delivery again now, same event id. */
  redeliver: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/deliveries/{id}/redeliver",
        tags: ["Webhooks"],
        summary: "Redeliver a delivery",
        description:
          "Sends the delivery again now, once, with the same event id and payload (receivers deduplicate on it), newly signed, whether the endpoint is enabled or not; waits for the attempt (at most 10 seconds) and answers with it. A failed redelivery does not count against the endpoint. Test keys send no webhooks: a msp_test_ key is refused with 403 insufficient_scope.",
      },
      ownTransactions: true,
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(DeliveryAttemptSchema)
    .mutation(async ({ ctx, input }) =>
      iso((await redeliver(ctx.principal.orgId, input.id, ctx.principal, ctx.auditActor)).attempt),
    ),

  /**
   * `POST /webhook-endpoints/{id}/replays` (webhooks:write): counts (`dryRun`, 200) or starts (202) a replay of what
   * failed since a time (docs/api-contract.md §6.10). Errors: 404; 409 `conflict` (disabled endpoint, a replay
   * running); 422 (window, events, more than 10,000 matches).
   */
  replay: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints/{id}/replays",
        tags,
        summary: "Replay failed deliveries",
        description: `Sends again, through the background worker at most 10 deliveries a second, the deliveries to this endpoint that failed (and have not succeeded since; one per event) for events recorded from since (within the events' retention) until until (default now), limited to events when given; with statuses ["failed", "missing"] also the events the endpoint's subscription and changedFields take that it never got (it was disabled). Each is signed anew with the endpoint's secret, recorded in its delivery log as a replay (trigger replay, replayId), and a failure does not count towards disabling the endpoint. With dryRun: true nothing is sent and the answer is 200 with the count. Otherwise 202 with the replay: follow it with GET …/replays/{replayId}. Refused with 409 conflict when the endpoint is disabled or a replay of it is running, 403 insufficient_scope for a test key (test keys send no webhooks; a dry run is allowed), 422 when more than ${REPLAY_MAX_MATCHED.toLocaleString("en")} deliveries match (the message gives the count). Recorded in the settings audit trail.`,
      },
      successStatus: 202,
      dryRunStatus: 200,
      errors: ["conflict"],
    })
    .input(WebhookReplayCreateSchema)
    .output(z.union([WebhookReplaySchema, WebhookReplayDryRunSchema]))
    .mutation(async ({ ctx, input }) => {
      const { id, dryRun, ...window } = input;
      const orgId = ctx.principal.orgId;
      return iso(
        dryRun ? await countReplay(orgId, id, window) : await startReplay(orgId, id, window, keyRequester(ctx)),
      );
    }),

  /** `GET /webhook-endpoints/{id}/replays` (webhooks:read): the endpoint's replays, newest first. */
  replays: apiProcedure("webhooks:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook-endpoints/{id}/replays",
        tags,
        summary: "List replays",
        description:
          "The endpoint's replays, newest first, keyset-paged (limit, cursor, hasMore, nextCursor), with their progress.",
      },
      envelope: "list",
    })
    .input(WebhookReplayListQuerySchema)
    .output(WebhookReplayListSchema)
    .query(async ({ ctx, input }) => {
      const page = await listReplays(ctx.principal.orgId, input.id, { limit: input.limit, cursor: input.cursor });
      return { ...page, data: page.data.map((replay) => iso(replay)) };
    }),

  /** `GET /webhook-endpoints/{id}/replays/{replayId}` (webhooks:read): one replay and its progress. */
  getReplay: apiProcedure("webhooks:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/webhook-endpoints/{id}/replays/{replayId}",
        tags,
        summary: "Get a replay",
        description: "One replay of the endpoint: its status, how many deliveries it matched, sent and saw succeed.",
      },
    })
    .input(WebhookReplayPathSchema)
    .output(WebhookReplaySchema)
    .query(async ({ ctx, input }) => iso(await getReplay(ctx.principal.orgId, input.id, input.replayId))),

  /** `POST /webhook-endpoints/{id}/replays/{replayId}/cancel` (webhooks:write): stops a running replay. */
  cancelReplay: apiProcedure("webhooks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/webhook-endpoints/{id}/replays/{replayId}/cancel",
        tags,
        summary: "Cancel a replay",
        description:
          "Stops a running replay: nothing more is sent (a delivery under way finishes) and its status becomes cancelled. A replay that has already ended is answered as it is, so cancelling twice is harmless. Recorded in the settings audit trail.",
      },
    })
    .input(WebhookReplayPathSchema)
    .output(WebhookReplaySchema)
    .mutation(async ({ ctx, input }) =>
      iso(await cancelReplay(ctx.principal.orgId, input.id, input.replayId, keyRequester(ctx))),
    ),
});
