import { z } from "zod";
import { IdSchema, ListQueryBase, listOf, sortParam, TimestampSchema } from "../../contract/common";
import {
  CONTACT_BULK_EXAMPLE,
  CONTACT_BULK_RESULT_EXAMPLE,
  CONTACT_CREATE_EXAMPLE,
  CONTACT_EXAMPLE,
  CONTACT_UPDATE_EXAMPLE,
} from "../../contract/examples";
import { BULK_MAX } from "../accounts/schema";
import { BulkModeSchema, bulkItem } from "../bulk.schema";
import { CustomFieldsInputSchema, CustomFieldValuesSchema, withCustomFieldParams } from "../custom-fields/schema";
import { type FilterTable, filterParams } from "../filters.schema";

/**
 * Sortable contact fields (docs/api-contract.md §4.9.2: `createdAt`, `updatedAt`, `email`, `lastName`) as the public
 * names of `sort`. `email` sorts case-insensitively (on the stored lower-case key); `lastName` may be null (nulls
 * last).
 */
export const CONTACT_SORT_FIELDS = ["createdAt", "updatedAt", "email", "lastName"] as const;

/** Default contact order. */
export const CONTACT_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

/**
 * Most account relationships a contact can have: what one `PATCH /contacts/{id}` may set, and what bulk upserts may
 * add up to (an item that would add a 101st is refused, 422).
 */
export const CONTACT_ACCOUNTS_MAX = 100;

const email = z
  .string()
  .trim()
  .max(254)
  .email()
  .describe(
    "Email address, up to 254 characters, stored trimmed and as spelled. Unique per organisation compared case-insensitively (Ann@x.com and ann@x.com are the same contact).",
  );
const firstName = z.string().trim().min(1).max(100).nullable().describe("First name, 1 to 100 characters.");
const lastName = z.string().trim().min(1).max(100).nullable().describe("Last name, 1 to 100 characters.");
const title = z.string().trim().min(1).max(200).nullable().describe("Job title, 1 to 200 characters.");
const phone = z
  .string()
  .trim()
  .min(1)
  .max(50)
  .nullable()
  .describe("Phone number as free text, 1 to 50 characters (E.164 such as +442071234567 recommended; not checked).");
const accountId = IdSchema.describe(
  "Id of an account of the organisation to relate the contact to; an id that names no account of the organisation is refused (422) and nothing is written.",
);
const role = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .nullable()
  .describe('The contact\'s role at the account, free text 1 to 100 characters, e.g. "Billing", "Decision maker".');
const isPrimary = z
  .boolean()
  .describe(
    "Whether this account is the contact's primary account. A contact has at most one: setting it on one relationship clears it on the others.",
  );

/** One account relationship of a contact as responses show it (docs/api-contract.md §2.4). */
export const ContactAccountLinkSchema = z
  .object({
    accountId: IdSchema.describe("Id of the related account."),
    accountName: z.string().max(255).describe("The related account's current name."),
    role: z.string().max(100).nullable().describe("The contact's role at the account (null when not given)."),
    isPrimary: z.boolean().describe("true for the contact's primary account; at most one per contact."),
  })
  .meta({ id: "ContactAccountRelationship" });

/**
 * A contact as every contact endpoint returns it and as `contact.*` events carry it (docs/api-contract.md §2.4, §6.2):
 * the scalar fields plus `accounts`, its account relationships, the primary one first and then by account name.
 */
export const ContactSchema = z
  .object({
    id: IdSchema,
    email: z.string().max(254).describe("Email address as stored (trimmed, spelling kept)."),
    firstName: z.string().max(100).nullable().describe("First name."),
    lastName: z.string().max(100).nullable().describe("Last name."),
    title: z.string().max(200).nullable().describe("Job title."),
    phone: z.string().max(50).nullable().describe("Phone number as given."),
    accounts: z
      .array(ContactAccountLinkSchema)
      .max(CONTACT_ACCOUNTS_MAX)
      .describe(
        `Account relationships, at most ${CONTACT_ACCOUNTS_MAX}: the primary one first, then by account name (ties by accountId). Empty when the contact is related to no account.`,
      ),
    customFields: CustomFieldValuesSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema.describe(
      "ISO 8601 UTC timestamp with milliseconds of the last change of a field or of the relationships.",
    ),
  })
  .meta({ id: "Contact", example: CONTACT_EXAMPLE });

/** A contact as returned by the API. */
export type Contact = z.infer<typeof ContactSchema>;

type LinkFields = { accountId?: string; role?: string | null; isPrimary?: boolean };

// role and isPrimary describe a relationship, so they mean nothing without the account they relate to.
function requireAccountId(value: LinkFields, ctx: z.core.$RefinementCtx<LinkFields>) {
  if (value.accountId !== undefined) return;
  for (const field of ["role", "isPrimary"] as const) {
    if (value[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: "needs accountId" });
  }
}

const createFields = {
  email,
  firstName: firstName.optional(),
  lastName: lastName.optional(),
  title: title.optional(),
  phone: phone.optional(),
  accountId: accountId.optional(),
  role: role.optional().describe("The contact's role at the account given by accountId; needs accountId."),
  isPrimary: isPrimary
    .optional()
    .describe("Whether the account given by accountId is the contact's primary account (default false)."),
  customFields: CustomFieldsInputSchema.optional(),
};

/**
 * Body of `POST /contacts` (docs/api-contract.md §4.2): `email` required; `accountId` (with optional `role`,
 * `isPrimary`) makes the contact's first account relationship. Unknown fields, and `role`/`isPrimary` without
 * `accountId`, are refused (422).
 */
export const ContactCreateSchema = z
  .strictObject(createFields)
  .superRefine(requireAccountId)
  .meta({ id: "ContactCreate", examples: [CONTACT_CREATE_EXAMPLE] });

/** A validated contact creation body. */
export type ContactCreate = z.infer<typeof ContactCreateSchema>;

/** One relationship of the `accounts` set of `PATCH /contacts/{id}`. */
export const ContactAccountInputSchema = z
  .strictObject({
    accountId,
    role: role.optional().describe("The contact's role at the account; default null."),
    isPrimary: isPrimary.optional().describe("Whether this is the contact's primary account; default false."),
  })
  .meta({ id: "ContactAccountInput" });

/**
 * Body of `PATCH /contacts/{id}`: any subset of the scalar fields (`null` clears an optional one) and optionally
 * `accounts`, which replaces the contact's whole set of relationships. Within `accounts` an account may appear once and
 * at most one item may be primary (422 otherwise).
 */
export const ContactUpdateSchema = z
  .strictObject({
    id: IdSchema,
    email: email.optional(),
    firstName: firstName.optional(),
    lastName: lastName.optional(),
    title: title.optional(),
    phone: phone.optional(),
    accounts: z
      .array(ContactAccountInputSchema)
      .max(CONTACT_ACCOUNTS_MAX)
      .describe(
        `The contact's complete set of account relationships, 0 to ${CONTACT_ACCOUNTS_MAX}: relationships not listed are removed, listed ones are added or get the role and isPrimary given (left out: null and false). [] removes all. Leave the field out to keep the relationships as they are.`,
      )
      .optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .superRefine((value, ctx) => {
    const seen = new Map<string, number>();
    let primary: number | undefined;
    value.accounts?.forEach((link, index) => {
      const first = seen.get(link.accountId);
      if (first !== undefined) {
        ctx.addIssue({ code: "custom", path: ["accounts", index, "accountId"], message: `duplicates item ${first}` });
      } else seen.set(link.accountId, index);
      if (link.isPrimary !== true) return;
      if (primary !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["accounts", index, "isPrimary"],
          message: `item ${primary} is already primary; a contact has at most one primary account`,
        });
      } else primary = index;
    });
  })
  .meta({ examples: [CONTACT_UPDATE_EXAMPLE] });

/** A validated contact update (path id plus changed fields). */
export type ContactUpdate = z.infer<typeof ContactUpdateSchema>;

/** Filterable fields of `GET /contacts` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const CONTACT_FILTERS: FilterTable = {
  email: "text",
  firstName: "text",
  lastName: "text",
  title: "text",
  phone: "text",
  createdAt: "date",
  updatedAt: "date",
};

/** Query of `GET /contacts` (docs/api-contract.md §4.2, §4.9). */
export const ContactListQuerySchema = withCustomFieldParams({
  ...ListQueryBase,
  sort: sortParam(CONTACT_SORT_FIELDS, "createdAt:asc", true),
  accountId: IdSchema.describe(
    "Only contacts related to this account. An id that names no account of the organisation gives an empty list.",
  ).optional(),
  email: z
    .string()
    .trim()
    .min(1)
    .max(254)
    .describe("Only the contact with this email address (exact match, case-insensitive).")
    .meta({ example: "anna.lopez@northwind-dental.example" })
    .optional(),
  ...filterParams(CONTACT_FILTERS),
});

/** A validated contact list query. */
export type ContactListQuery = z.infer<typeof ContactListQuerySchema>;

/** A page of contacts; each item has the `GET /contacts/{id}` shape, relationships included. */
export const ContactListSchema = listOf(ContactSchema);

/**
 * Body of `POST /contacts/bulk` (docs/api-contract.md §4.2): 1 to 500 contacts, matched on email case-insensitively.
 */
export const ContactBulkSchema = z
  .strictObject({
    contacts: z
      .array(bulkItem(ContactCreateSchema))
      .min(1)
      .max(BULK_MAX)
      .describe(
        `1 to ${BULK_MAX} contacts. An item whose email (compared case-insensitively) belongs to a contact of the organisation updates it (fields left out keep their values; the email takes the item's spelling); any other item creates one. An email may appear once per request. An item's accountId adds that relationship when missing, or applies the role and isPrimary given to it when present; relationships are never removed by bulk.`,
      ),
    mode: BulkModeSchema,
  })
  .meta({ examples: [CONTACT_BULK_EXAMPLE] });

/** Response data of `POST /contacts/bulk`: counts and one result per item, in request order. */
export const ContactBulkResultSchema = z
  .object({
    created: z.int().min(0).max(BULK_MAX).describe("Contacts created."),
    updated: z
      .int()
      .min(0)
      .max(BULK_MAX)
      .describe("Existing contacts matched by email and updated (also when nothing changed; those keep updatedAt)."),
    total: z.int().min(0).max(BULK_MAX).describe("created + updated; equals the number of items sent."),
    results: z
      .array(
        z.object({
          email: z.string().max(254).describe("The item's email as sent (trimmed)."),
          id: IdSchema.describe("Id of the contact the item created or updated."),
          action: z.enum(["created", "updated"]).describe("What happened to the item's contact."),
        }),
      )
      .max(BULK_MAX)
      .describe("One result per item, in request order."),
  })
  .meta({ id: "ContactBulkResult", example: CONTACT_BULK_RESULT_EXAMPLE });

/** The bulk upsert result. */
export type ContactBulkResult = z.infer<typeof ContactBulkResultSchema>;
