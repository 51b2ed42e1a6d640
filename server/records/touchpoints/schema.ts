import { z } from "zod";
import {
  DateTimeInputSchema,
  IdSchema,
  ListQueryBase,
  listOf,
  sortParam,
  TimestampSchema,
} from "../../contract/common";
import { TOUCHPOINT_CREATE_EXAMPLE, TOUCHPOINT_EXAMPLE } from "../../contract/examples";
import { type FilterTable, filterParams } from "../filters.schema";

/** Sortable touchpoint fields (docs/api-contract.md §4.9.2: `occurredAt`, `createdAt`, `updatedAt`). */
export const TOUCHPOINT_SORT_FIELDS = {
  occurredAt: { nullable: false },
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
} as const;

/** Default touchpoint order (docs/api-contract.md §4.9.2: `createdAt:asc`, ties by id). */
export const TOUCHPOINT_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

/** How far in the future `occurredAt` may lie, for clock skew between the caller and the service: 5 minutes. */
export const OCCURRED_AT_MAX_SKEW_MS = 5 * 60_000;

/** Kinds of touchpoint (docs/api-contract.md §2.9). */
export const TouchpointTypeSchema = z
  .enum(["EMAIL", "CALL", "MEETING", "QBR", "SITE_VISIT", "TICKET", "CHAT"])
  .describe("Kind of interaction: EMAIL, CALL, MEETING, QBR (quarterly business review), SITE_VISIT, TICKET or CHAT.");

/** Direction of a touchpoint (docs/api-contract.md §2.9). */
export const TouchpointDirectionSchema = z
  .enum(["INBOUND", "OUTBOUND", "INTERNAL"])
  .describe("INBOUND (the customer reached out), OUTBOUND (the MSP reached out) or INTERNAL (among the MSP's staff).");

/**
 * A touchpoint as every touchpoint endpoint returns it and as `touchpoint.created` carries it (docs/api-contract.md
 * §2.9, §6.2).
 */
export const TouchpointSchema = z
  .object({
    id: IdSchema,
    accountId: IdSchema.describe("Id of the account the interaction was with."),
    contactId: IdSchema.nullable().describe("Id of the contact involved; null when none was given."),
    type: TouchpointTypeSchema,
    direction: TouchpointDirectionSchema,
    subject: z.string().max(255).nullable().describe("Subject line or short title."),
    notes: z.string().max(10_000).nullable().describe("Free-text notes."),
    occurredAt: TimestampSchema.describe("When the interaction happened (ISO 8601 UTC)."),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ id: "Touchpoint", example: TOUCHPOINT_EXAMPLE });

/** A touchpoint as returned by the API. */
export type Touchpoint = z.infer<typeof TouchpointSchema>;

/**
 * Body of `POST /touchpoints` (docs/api-contract.md §4.7): `accountId`, `type` and `direction` required; `occurredAt`
 * defaults to the time of the request and may not lie more than 5 minutes in the future. Unknown fields are refused
 * (422).
 */
export const TouchpointCreateSchema = z
  .strictObject({
    accountId: IdSchema.describe("Id of the account the interaction was with; must be an account of the organisation."),
    contactId: IdSchema.nullable()
      .describe(
        "Id of the contact involved; must be a contact of the organisation (it need not be linked to the account).",
      )
      .optional(),
    type: TouchpointTypeSchema,
    direction: TouchpointDirectionSchema,
    subject: z.string().trim().min(1).max(255).nullable().describe("Subject line, 1 to 255 characters.").optional(),
    notes: z.string().max(10_000).nullable().describe("Free-text notes, up to 10,000 characters.").optional(),
    occurredAt: DateTimeInputSchema.refine((value) => Date.parse(value) <= Date.now() + OCCURRED_AT_MAX_SKEW_MS, {
      message: "must not be more than 5 minutes in the future",
    })
      .describe(
        "When the interaction happened: ISO 8601 timestamp with a time zone (Z or ±hh:mm); default the time of the request; at most 5 minutes in the future.",
      )
      .optional(),
  })
  .meta({ id: "TouchpointCreate", examples: [TOUCHPOINT_CREATE_EXAMPLE] });

/** A validated touchpoint creation body. */
export type TouchpointCreate = z.infer<typeof TouchpointCreateSchema>;

/** Filterable fields of `GET /touchpoints` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const TOUCHPOINT_FILTERS: FilterTable = {
  accountId: "id",
  subject: "text",
  type: { enum: TouchpointTypeSchema.options },
  direction: { enum: TouchpointDirectionSchema.options },
  occurredAt: "date",
  createdAt: "date",
  updatedAt: "date",
};

/** Query of `GET /touchpoints` (docs/api-contract.md §4.7, §4.9): filters `accountId`, `type`, `updatedAfter`. */
export const TouchpointListQuerySchema = z.strictObject({
  ...ListQueryBase,
  sort: sortParam(Object.keys(TOUCHPOINT_SORT_FIELDS), "createdAt:asc"),
  accountId: IdSchema.describe("Only touchpoints with this account (an unknown id gives an empty list).").optional(),
  type: TouchpointTypeSchema.describe("Only touchpoints of this type.").optional(),
  ...filterParams(TOUCHPOINT_FILTERS),
});

/** A validated touchpoint list query. */
export type TouchpointListQuery = z.infer<typeof TouchpointListQuerySchema>;

/** A page of touchpoints. */
export const TouchpointListSchema = listOf(TouchpointSchema);
