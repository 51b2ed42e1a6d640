import { z } from "zod";
import { DateSchema, IdSchema, ListQueryBase, listOf, sortParam, TimestampSchema } from "../../contract/common";
import {
  DEAL_BULK_EXAMPLE,
  DEAL_BULK_RESULT_EXAMPLE,
  DEAL_CREATE_EXAMPLE,
  DEAL_EXAMPLE,
  DEAL_UPDATE_EXAMPLE,
} from "../../contract/examples";
import { BULK_MAX } from "../accounts/schema";
import { BulkModeSchema, bulkItem } from "../bulk.schema";
import { CustomFieldsInputSchema, CustomFieldValuesSchema, withCustomFieldParams } from "../custom-fields/schema";
import { type FilterTable, filterParams } from "../filters.schema";

/** Deal pipeline stages (docs/api-contract.md §2.5, §3); CLOSED_WON and CLOSED_LOST are the Won and Lost outcomes. */
export const DealStageSchema = z
  .enum(["QUALIFICATION", "DISCOVERY", "PROPOSAL", "NEGOTIATION", "CLOSED_WON", "CLOSED_LOST"])
  .describe(
    "Pipeline stage. QUALIFICATION, DISCOVERY, PROPOSAL and NEGOTIATION are open; CLOSED_WON and CLOSED_LOST are the outcomes.",
  );

/** A deal stage. */
export type DealStage = z.infer<typeof DealStageSchema>;

/** The closed outcomes of a deal (docs/api-contract.md §3): entering one stamps `closedAt`, leaving one clears it. */
export const CLOSED_STAGES: ReadonlySet<DealStage> = new Set(["CLOSED_WON", "CLOSED_LOST"]);

/** Deal types (docs/api-contract.md §2.5). */
export const DealTypeSchema = z.enum(["NEW_BUSINESS", "UPSELL", "RENEWAL"]).describe("Kind of deal.");

/** Values a created deal takes for the fields its body leaves out. */
export const DEAL_DEFAULTS = {
  estimatedMrr: 0,
  probability: 10,
  stage: "QUALIFICATION",
  type: "NEW_BUSINESS",
} as const;

/**
 * Sortable deal fields (docs/api-contract.md §4.9.2: `estimatedMrr`, `createdAt`, `updatedAt`, `probability`); none is
 * nullable.
 */
export const DEAL_SORT_FIELDS = {
  estimatedMrr: { nullable: false },
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
  probability: { nullable: false },
} as const;

/** Default deal order. */
export const DEAL_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

/** Largest `estimatedMrr` the store holds (numeric(12,2)). */
export const MRR_MAX = 9_999_999_999.99;

const name = z.string().trim().min(1).max(255).describe("Deal name, 1 to 255 characters.");
const accountId = IdSchema.describe(
  "Id of the account the deal belongs to; must be an account of the organisation (otherwise 422).",
);
const estimatedMrr = z
  .number()
  .min(0)
  .max(MRR_MAX)
  .multipleOf(0.01)
  .describe(
    `Estimated monthly recurring revenue in currency units per month, 0 to ${MRR_MAX}, at most 2 decimals. Default ${DEAL_DEFAULTS.estimatedMrr}.`,
  );
const probability = z
  .int()
  .min(0)
  .max(100)
  .describe(`Chance of winning, integer percent 0 to 100. Default ${DEAL_DEFAULTS.probability}.`);
const serviceCategory = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .nullable()
  .describe('Service line, free text up to 100 characters, e.g. "Managed Services", "Security", "Backup", "Cloud".');
const ownerId = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .nullable()
  .describe("Identifier of the deal owner (a user in the caller's system, up to 255 characters; not checked).");
const expectedCloseDate = DateSchema.nullable().describe(
  "Expected close date, YYYY-MM-DD (a calendar date, no time zone).",
);

/** A deal as every deal endpoint returns it (docs/api-contract.md §2.5). */
export const DealSchema = z
  .object({
    id: IdSchema,
    name: z.string().max(255).describe("Deal name."),
    accountId: IdSchema.describe("Id of the account the deal belongs to."),
    estimatedMrr: z
      .number()
      .min(0)
      .max(MRR_MAX)
      .describe("Estimated monthly recurring revenue, currency units per month (2 decimals)."),
    probability: z.int().min(0).max(100).describe("Chance of winning, integer percent 0 to 100."),
    stage: DealStageSchema,
    type: DealTypeSchema,
    serviceCategory: z.string().max(100).nullable().describe("Service line (free text), used by the MRR summary."),
    ownerId: z.string().max(255).nullable().describe("Identifier of the deal owner."),
    expectedCloseDate: DateSchema.nullable().describe("Expected close date, YYYY-MM-DD."),
    closedAt: TimestampSchema.nullable().describe(
      "Read-only. When the deal entered CLOSED_WON or CLOSED_LOST (ISO 8601 UTC); null while the deal is open.",
    ),
    customFields: CustomFieldValuesSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ id: "Deal", example: DEAL_EXAMPLE });

/** A deal as returned by the API. */
export type Deal = z.infer<typeof DealSchema>;

/**
 * Body of `POST /deals` (docs/api-contract.md §4.3): `name` and `accountId` required; unknown fields (e.g. `closedAt`)
 * are refused.
 */
export const DealCreateSchema = z
  .strictObject({
    name,
    accountId,
    estimatedMrr: estimatedMrr.optional(),
    probability: probability.optional(),
    stage: DealStageSchema.optional().describe(
      `Initial stage; default ${DEAL_DEFAULTS.stage}. A deal created as CLOSED_WON or CLOSED_LOST gets closedAt = now and records deal.created only.`,
    ),
    type: DealTypeSchema.optional().describe(`Kind of deal; default ${DEAL_DEFAULTS.type}.`),
    serviceCategory: serviceCategory.optional(),
    ownerId: ownerId.optional(),
    expectedCloseDate: expectedCloseDate.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ id: "DealCreate", examples: [DEAL_CREATE_EXAMPLE] });

/** A validated deal creation body. */
export type DealCreate = z.infer<typeof DealCreateSchema>;

/** Body of `PATCH /deals/{id}`: any subset of the create fields; `null` clears an optional field. */
export const DealUpdateSchema = z
  .strictObject({
    id: IdSchema,
    name: name.optional(),
    accountId: accountId.optional(),
    estimatedMrr: estimatedMrr.optional(),
    probability: probability.optional(),
    stage: DealStageSchema.optional().describe(
      "New stage. Any stage may be set, including reopening a closed deal; see the operation description for events and closedAt.",
    ),
    type: DealTypeSchema.optional(),
    serviceCategory: serviceCategory.optional(),
    ownerId: ownerId.optional(),
    expectedCloseDate: expectedCloseDate.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ examples: [DEAL_UPDATE_EXAMPLE] });

/** A validated deal update (path id plus changed fields). */
export type DealUpdate = z.infer<typeof DealUpdateSchema>;

/** Filterable fields of `GET /deals` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const DEAL_FILTERS: FilterTable = {
  name: "text",
  stage: { enum: DealStageSchema.options },
  type: { enum: DealTypeSchema.options },
  accountId: "id",
  ownerId: "text",
  serviceCategory: "text",
  estimatedMrr: "number",
  probability: "number",
  closedAt: "date",
  createdAt: "date",
  updatedAt: "date",
};

/** Query of `GET /deals` (docs/api-contract.md §4.3, §4.9). */
export const DealListQuerySchema = withCustomFieldParams({
  ...ListQueryBase,
  sort: sortParam(Object.keys(DEAL_SORT_FIELDS), "createdAt:asc", true),
  stage: DealStageSchema.describe("Only deals in this stage.").optional(),
  accountId: IdSchema.describe("Only deals of this account.").optional(),
  ownerId: z
    .string()
    .min(1)
    .max(255)
    .describe("Only deals of this owner (exact match).")
    .meta({ example: "user-17" })
    .optional(),
  type: DealTypeSchema.describe("Only deals of this type.").optional(),
  ...filterParams(DEAL_FILTERS),
});

/** A validated deal list query. */
export type DealListQuery = z.infer<typeof DealListQuerySchema>;

/** A page of deals. */
export const DealListSchema = listOf(DealSchema);

/** Body of `POST /deals/bulk` (docs/api-contract.md §4.3): 1 to 500 deals to create; there is no upsert. */
export const DealBulkSchema = z
  .strictObject({
    deals: z
      .array(bulkItem(DealCreateSchema))
      .min(1)
      .max(BULK_MAX)
      .describe(
        `1 to ${BULK_MAX} deals, each with the fields of POST /deals. Every item creates a new deal; nothing is written when any item is invalid.`,
      ),
    mode: BulkModeSchema,
  })
  .meta({ examples: [DEAL_BULK_EXAMPLE] });

/** Response data of `POST /deals/bulk`: counts and one result per item, in request order. */
export const DealBulkResultSchema = z
  .object({
    created: z.int().min(0).max(BULK_MAX).describe("Deals created; equals the number of items sent."),
    total: z.int().min(0).max(BULK_MAX).describe("Number of items sent."),
    results: z
      .array(
        z.object({
          index: z
            .int()
            .min(0)
            .max(BULK_MAX - 1)
            .describe("Position of the item in the request, from 0."),
          id: IdSchema.describe("Id of the deal created for that item."),
        }),
      )
      .max(BULK_MAX)
      .describe("One result per item, in request order."),
  })
  .meta({ id: "DealBulkResult", example: DEAL_BULK_RESULT_EXAMPLE });

/** The bulk create result. */
export type DealBulkResult = z.infer<typeof DealBulkResultSchema>;
