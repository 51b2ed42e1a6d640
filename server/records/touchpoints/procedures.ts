import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { TouchpointCreateSchema, TouchpointListQuerySchema, TouchpointListSchema, TouchpointSchema } from "./schema";
import { createTouchpoint, getTouchpoint, listTouchpoints } from "./service";

const tags = ["Touchpoints"];

/**
 * Touchpoints endpoints (docs/api-contract.md §4.7, §6.1). Touchpoints are an append-only activity log: there is no
 * update or delete. Errors: 400 `bad_request`/`invalid_json`, 401 `unauthorized`, 403 `insufficient_scope`, 404
 * `not_found`, 422 `validation_error`, as documented per operation in OpenAPI.
 */
export const touchpointsRouter = router({
  /** `GET /touchpoints` (touchpoints:read): a keyset page; filters `accountId`, `type`, `updatedAfter`. */
  list: apiProcedure("touchpoints:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/touchpoints",
        tags,
        summary: "List touchpoints",
        description:
          "Keyset-paginated activity log of the organisation, in creation order by default. Sort allow-list: occurredAt, createdAt, updatedAt (e.g. sort=occurredAt:desc for a timeline). An accountId filter naming no account gives an empty page.",
      },
      envelope: "list",
    })
    .input(TouchpointListQuerySchema)
    .output(TouchpointListSchema)
    .query(({ ctx, input }) => listTouchpoints(ctx.principal.orgId, input)),

  /** `POST /touchpoints` (touchpoints:write): logs a touchpoint, 201; records `touchpoint.created`. */
  create: apiProcedure("touchpoints:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/touchpoints",
        tags,
        summary: "Log a touchpoint",
        description:
          "accountId, type and direction are required. accountId must be an account of the organisation; contactId, when given, must be a contact of the organisation, which need not be linked to the account (a partner or a not-yet-linked contact may take part); otherwise 422 and nothing is logged. occurredAt defaults to the time of the request and may be at most 5 minutes in the future (clock skew); any past time is accepted, for back-filling. Records touchpoint.created.",
      },
      successStatus: 201,
    })
    .input(TouchpointCreateSchema)
    .output(TouchpointSchema)
    .mutation(({ ctx, input }) => createTouchpoint(ctx.principal.orgId, input, ctx.principal)),

  /** `GET /touchpoints/{id}` (touchpoints:read): the shape `touchpoint.created` carries. */
  get: apiProcedure("touchpoints:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/touchpoints/{id}",
        tags,
        summary: "Get a touchpoint",
        description:
          "Not in the contract's endpoint table; added so that the data of a touchpoint.created event can be fetched again (webhook data equals this response).",
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(TouchpointSchema)
    .query(({ ctx, input }) => getTouchpoint(ctx.principal.orgId, input.id)),
});
