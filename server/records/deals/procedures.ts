import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { runBulk } from "../bulk";
import { PARTIAL_MODE, PartialBulkResultSchema } from "../bulk.schema";
import { CUSTOM_FIELD_LIST_TEXT } from "../custom-fields/schema";
import {
  type DealBulkResult,
  DealBulkResultSchema,
  DealBulkSchema,
  type DealCreate,
  DealCreateSchema,
  DealListQuerySchema,
  DealListSchema,
  DealSchema,
  DealUpdateSchema,
} from "./schema";
import { bulkCreateDeals, createDeal, getDeal, listDeals, updateDeal } from "./service";

const tags = ["Deals"];

const ACCOUNT_RULE =
  "accountId must name an account of the caller's organisation; otherwise 422 validation_error on accountId and nothing is written.";

/**
 * Deals endpoints (docs/api-contract.md §4.3, §3, §6.1). Errors: 401, 403, 404, 400, 422 as documented per operation in
 * OpenAPI.
 */
export const dealsRouter = router({
  /** `GET /deals` (deals:read): a keyset page; filters `stage`, `accountId`, `ownerId`, `type`, `updatedAfter`. */
  list: apiProcedure("deals:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/deals",
        tags,
        summary: "List deals",
        description: `Keyset-paginated deals of the organisation. Filters combine with AND. Sort allow-list: estimatedMrr, createdAt, updatedAt, probability; default createdAt:asc, ties by id. ${CUSTOM_FIELD_LIST_TEXT}`,
      },
      envelope: "list",
    })
    .input(DealListQuerySchema)
    .output(DealListSchema)
    .query(({ ctx, input }) => listDeals(ctx.principal.orgId, input)),

  /** `POST /deals` (deals:write): creates a deal, 201; records `deal.created`. */
  create: apiProcedure("deals:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/deals",
        tags,
        summary: "Create a deal",
        description: `Creates a deal and records the deal.created event. Defaults: stage QUALIFICATION, type NEW_BUSINESS, probability 10, estimatedMrr 0. A deal created directly as CLOSED_WON or CLOSED_LOST gets closedAt = now and records deal.created only (no closed_won/closed_lost event). closedAt is read-only. ${ACCOUNT_RULE}`,
      },
      successStatus: 201,
    })
    .input(DealCreateSchema)
    .output(DealSchema)
    .mutation(({ ctx, input }) => createDeal(ctx.principal.orgId, input, ctx.principal)),

  /** `POST /deals/bulk` (deals:write): creates up to 500 deals, 201; one `deal.created` per deal. */
  bulk: apiProcedure("deals:write")
    .meta({
      expensive: "bulk",
      openapi: {
        method: "POST",
        path: "/deals/bulk",
        tags,
        summary: "Bulk create deals",
        description: `Creates 1 to 500 deals in one transaction (create only, no upsert: re-sending an item creates another deal). Each item follows the rules of POST /deals and records deal.created. All-or-nothing: when any item is invalid, or names an account that is not in the organisation (422, path deals.<index>.accountId), nothing is written. Answers 201 with {created, total, results:[{index, id}]} in request order. ${PARTIAL_MODE}`,
      },
      successStatus: 201,
      partialStatus: 207,
      query: ["mode"],
    })
    .input(DealBulkSchema)
    .output(z.union([DealBulkResultSchema, PartialBulkResultSchema]))
    .mutation(({ ctx, input }) =>
      runBulk<DealCreate, DealBulkResult>({
        list: "deals",
        mode: input.mode,
        items: input.deals,
        run: (valid) => bulkCreateDeals(ctx.principal.orgId, valid, ctx.principal),
        outcomes: (r) => r.results.map((x) => ({ id: x.id, status: "created" as const })),
      }),
    ),

  /** `GET /deals/{id}` (deals:read). */
  get: apiProcedure("deals:read")
    .meta({ openapi: { method: "GET", path: "/deals/{id}", tags, summary: "Get a deal" } })
    .input(z.strictObject({ id: IdSchema }))
    .output(DealSchema)
    .query(({ ctx, input }) => getDeal(ctx.principal.orgId, input.id)),

  /**
   * `PATCH /deals/{id}` (deals:write): partial update, including stage changes and the Won/Lost outcomes
   * (docs/api-contract.md §3).
   */
  update: apiProcedure("deals:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/deals/{id}",
        tags,
        summary: "Update a deal",
        description: `Partial update; null clears an optional field. Stage rules: any stage may be set from any stage. Moving to CLOSED_WON records deal.closed_won and moving to CLOSED_LOST records deal.closed_lost, both stamping closedAt with the current time (also when switching from one outcome to the other). Moving to an open stage records deal.stage_changed; reopening a closed deal this way is allowed and clears closedAt. Each event carries the deal as GET returns it after the change. Changes to other fields alone record deal.updated; every event carries changedFields and previous for the whole change. A PATCH that changes nothing changes nothing: updatedAt stays, no event. ${ACCOUNT_RULE}`,
      },
    })
    .input(DealUpdateSchema)
    .output(DealSchema)
    .mutation(({ ctx, input }) => updateDeal(ctx.principal.orgId, input, ctx.principal)),
});
