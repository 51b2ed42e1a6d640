import { z } from "zod";
import { apiProcedure, router } from "../../trpc";
import { EventListQuerySchema, EventListSchema, EventSchema } from "./schema";
import { getEvent, listEvents } from "./service";

const tags = ["Events"];

/**
 * The events feed (docs/api-contract.md §4.10, §6.8): every change of the organisation, to keep a copy in sync with no
 * gaps. Errors: 400 `bad_request` (malformed cursor), 401, 403, 404, 410 `cursor_expired`, 422, as documented per
 * operation in OpenAPI.
 */
export const eventsRouter = router({
  /** `GET /events` (events:read): a page of the feed, oldest first, after `cursor`. */
  list: apiProcedure("events:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/events",
        tags,
        summary: "List events (the events feed)",
        description:
          "Every change of the organisation, oldest first: created, updated and deleted for accounts, contacts, deals, devices, tasks, notes and touchpoints, one event per record for bulk operations, and hard deletions as tombstones ({id, resource, deleted: true} plus the record's external key). Each event is the webhook payload (id, event, timestamp, orgId, resource, actor, data; changedFields and previous for changes of an existing record). To stay in sync: list the resources once, then follow this feed from its start, applying each event in order (upsert data, or delete on a tombstone), and keep nextCursor: it is present on the last page too, so you poll again later from where you stopped. No event is ever skipped: an event becomes visible only once every transaction that began writing before it has ended, so a page never runs ahead of a change still being committed (the order is the order of the writing transactions' ids). Events are kept 30 days (EVENT_RETENTION_DAYS); a cursor older than that gives 410 cursor_expired: resynchronise. Health scores and MRR are derived values and have no events.",
      },
      envelope: "list",
    })
    .input(EventListQuerySchema)
    .output(EventListSchema)
    .query(({ ctx, input }) => listEvents(ctx.principal.orgId, input)),

  /** `GET /events/{id}` (events:read): one event. */
  get: apiProcedure("events:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/events/{id}",
        tags,
        summary: "Get an event",
        description:
          "One event of the feed by its id (the id webhook deliveries carry in Service-Event-Id and webhook-id). 404 when it does not exist, is older than the retention period or belongs to another organisation.",
      },
    })
    .input(
      z.strictObject({
        id: z
          .string()
          .min(1)
          .max(64)
          .regex(/^evt_[A-Za-z0-9_-]+$/, "must be an event id")
          .describe("Event id, evt_<unix_seconds>_<token>.")
          .meta({ example: "evt_1763984100_Qm9vS2VlcGVyMDE" }),
      }),
    )
    .output(EventSchema)
    .query(({ ctx, input }) => getEvent(ctx.principal.orgId, input.id)),
});
