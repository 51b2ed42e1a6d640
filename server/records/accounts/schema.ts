import { z } from "zod";
import {
  BooleanQuerySchema,
  IdSchema,
  ListQueryBase,
  listOf,
  sortParam,
  TimestampSchema,
  toNfc,
} from "../../contract/common";
import {
  ACCOUNT_BULK_EXAMPLE,
  ACCOUNT_BULK_RESULT_EXAMPLE,
  ACCOUNT_CREATE_EXAMPLE,
  ACCOUNT_EXAMPLE,
  ACCOUNT_UPDATE_EXAMPLE,
  DELETED_EXAMPLE,
} from "../../contract/examples";
import { BulkModeSchema, bulkItem } from "../bulk.schema";
import { CustomFieldsInputSchema, CustomFieldValuesSchema, withCustomFieldParams } from "../custom-fields/schema";
import { type FilterTable, filterParams } from "../filters.schema";

/** Account lifecycle values (docs/api-contract.md §2.3, §3). */
export const LifecycleStatusSchema = z
  .enum(["PROSPECT", "ACTIVE", "AT_RISK", "CHURNED"])
  .describe(
    "Lifecycle status. DELETE without force sets CHURNED; any value may be set with PATCH, including reactivation from CHURNED.",
  );

/** Sortable account fields (docs/api-contract.md §4.9.2: `name`, `createdAt`, `updatedAt`, `employeeCount`). */
export const ACCOUNT_SORT_FIELDS = {
  name: { nullable: false },
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
  employeeCount: { nullable: true },
} as const;

/** Default account order. */
export const ACCOUNT_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

const name = z.string().trim().min(1).max(255).describe("Account name, 1 to 255 characters.");
const industry = z.string().trim().min(1).max(100).nullable().describe("Industry, free text up to 100 characters.");
const employeeCount = z
  .int()
  .min(0)
  .max(10_000_000)
  .nullable()
  .describe("Number of employees, integer 0 to 10,000,000.");
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, "must be a domain name such as example.com")
  .nullable()
  .describe("Primary web domain, e.g. example.com.");
const externalId = z
  .string()
  .overwrite(toNfc)
  .min(1)
  .max(255)
  .nullable()
  .describe(
    "Identifier in the caller's system (PSA, RMM), stored in Unicode NFC and compared exactly (case-sensitive); unique per organisation; the match key of bulk upsert.",
  );

/** An account as every account endpoint returns it (docs/api-contract.md §2.3). */
export const AccountSchema = z
  .object({
    id: IdSchema,
    name: z.string().max(255).describe("Account name."),
    lifecycleStatus: LifecycleStatusSchema,
    industry: z.string().max(100).nullable().describe("Industry."),
    employeeCount: z.int().min(0).max(10_000_000).nullable().describe("Number of employees."),
    domain: z.string().max(253).nullable().describe("Primary web domain."),
    externalId: z.string().max(255).nullable().describe("Identifier in the caller's system; unique per organisation."),
    customFields: CustomFieldValuesSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ id: "Account", example: ACCOUNT_EXAMPLE });

/** An account as returned by the API. */
export type Account = z.infer<typeof AccountSchema>;

/** Body of `POST /accounts` (docs/api-contract.md §4.1): `name` required; unknown fields are refused (422). */
export const AccountCreateSchema = z
  .strictObject({
    name,
    lifecycleStatus: LifecycleStatusSchema.optional().describe("Lifecycle status; default PROSPECT."),
    industry: industry.optional(),
    employeeCount: employeeCount.optional(),
    domain: domain.optional(),
    externalId: externalId.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ id: "AccountCreate", examples: [ACCOUNT_CREATE_EXAMPLE] });

/** A validated account creation body. */
export type AccountCreate = z.infer<typeof AccountCreateSchema>;

/** Body of `PATCH /accounts/{id}`: any subset of the create fields; `null` clears an optional field. */
export const AccountUpdateSchema = z
  .strictObject({
    id: IdSchema,
    name: name.optional(),
    lifecycleStatus: LifecycleStatusSchema.optional(),
    industry: industry.optional(),
    employeeCount: employeeCount.optional(),
    domain: domain.optional(),
    externalId: externalId.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ examples: [ACCOUNT_UPDATE_EXAMPLE] });

/** A validated account update (path id plus changed fields). */
export type AccountUpdate = z.infer<typeof AccountUpdateSchema>;

/** Filterable fields of `GET /accounts` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const ACCOUNT_FILTERS: FilterTable = {
  name: "text",
  industry: "text",
  domain: "text",
  externalId: "key",
  lifecycleStatus: { enum: LifecycleStatusSchema.options },
  employeeCount: "number",
  createdAt: "date",
  updatedAt: "date",
};

/** Query of `GET /accounts` (docs/api-contract.md §4.1, §4.9). */
export const AccountListQuerySchema = withCustomFieldParams({
  ...ListQueryBase,
  sort: sortParam(Object.keys(ACCOUNT_SORT_FIELDS), "createdAt:asc", true),
  lifecycle: LifecycleStatusSchema.describe("Only accounts with this lifecycle status.").optional(),
  industry: z
    .string()
    .min(1)
    .max(100)
    .describe("Only accounts of this industry (exact, case-insensitive).")
    .meta({ example: "Healthcare" })
    .optional(),
  ...filterParams(ACCOUNT_FILTERS),
});

/** A validated account list query. */
export type AccountListQuery = z.infer<typeof AccountListQuerySchema>;

/** A page of accounts. */
export const AccountListSchema = listOf(AccountSchema);

/** Path and query of `DELETE /accounts/{id}`. */
export const AccountDeleteSchema = z.strictObject({
  id: IdSchema,
  force: BooleanQuerySchema.describe(
    "true removes the record for good (hard delete); otherwise the account is soft-deleted (CHURNED).",
  ).optional(),
});

/** Result of a hard delete. */
export const DeletedSchema = z
  .object({ id: IdSchema, deleted: z.literal(true).describe("Always true: the record no longer exists.") })
  .meta({ id: "Deleted", example: DELETED_EXAMPLE });

/** Maximum items of a bulk request (docs/api-contract.md §8). */
export const BULK_MAX = 500;

/**
 * Body of `POST /accounts/bulk` (docs/api-contract.md §4.1): 1 to 500 accounts, matched on `externalId` within the
 * organisation.
 */
export const AccountBulkSchema = z
  .strictObject({
    accounts: z
      .array(bulkItem(AccountCreateSchema))
      .min(1)
      .max(BULK_MAX)
      .describe(
        `1 to ${BULK_MAX} accounts. An item whose externalId exists in the organisation updates that account (fields left out keep their values); any other item creates one. An externalId may appear once per request.`,
      ),
    mode: BulkModeSchema,
  })
  .meta({ examples: [ACCOUNT_BULK_EXAMPLE] });

/** Response data of `POST /accounts/bulk`: counts and one result per item, in request order. */
export const AccountBulkResultSchema = z
  .object({
    created: z.int().min(0).max(BULK_MAX).describe("Accounts created."),
    updated: z
      .int()
      .min(0)
      .max(BULK_MAX)
      .describe("Existing accounts matched by externalId and updated (also when nothing changed)."),
    total: z.int().min(0).max(BULK_MAX).describe("created + updated; equals the number of items sent."),
    results: z
      .array(
        z.object({
          externalId: z.string().max(255).nullable().describe("The item's externalId (null when it had none)."),
          id: IdSchema.describe("Id of the account the item created or updated."),
          action: z.enum(["created", "updated"]).describe("What happened to the item's account."),
        }),
      )
      .max(BULK_MAX)
      .describe("One result per item, in request order."),
  })
  .meta({ id: "AccountBulkResult", example: ACCOUNT_BULK_RESULT_EXAMPLE });

/** The bulk upsert result. */
export type AccountBulkResult = z.infer<typeof AccountBulkResultSchema>;
