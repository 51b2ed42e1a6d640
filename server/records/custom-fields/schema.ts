// Custom fields (docs/api-contract.md §2.13): the definitions an organisation makes for its accounts, contacts, deals,
// devices and tasks, and the shape their values take on every record. The OpenAPI document declares `customFields` as
// an object of typed values whatever an organisation defines, so it stays one document; an organisation's own shape is
// served as JSON Schema (`GET /custom-fields/schema`).
import { z } from "zod";
import { BooleanQuerySchema, IdSchema, ListQueryBase, listOf, sortParam, TimestampSchema } from "../../contract/common";
import {
  CUSTOM_FIELD_CREATE_EXAMPLE,
  CUSTOM_FIELD_EXAMPLE,
  CUSTOM_FIELD_SCHEMA_EXAMPLE,
  CUSTOM_FIELD_UPDATE_EXAMPLE,
  CUSTOM_FIELD_VALUES_EXAMPLE,
} from "../../contract/examples";
import { FILTER_LIMITS } from "../filters.schema";

/** The resources that carry custom fields (docs/api-contract.md §2.13). */
export const CUSTOM_FIELD_RESOURCES = ["account", "contact", "deal", "device", "task"] as const;

/** One of {@link CUSTOM_FIELD_RESOURCES}. */
export type CustomFieldResource = (typeof CUSTOM_FIELD_RESOURCES)[number];

/** The types a custom field can have (docs/api-contract.md §2.13); a field's type never changes. */
export const CUSTOM_FIELD_TYPES = [
  "text",
  "number",
  "boolean",
  "date",
  "datetime",
  "select",
  "multiSelect",
  "url",
  "email",
  "currency",
] as const;

/** One of {@link CUSTOM_FIELD_TYPES}. */
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];

/** Types whose values are picked from the field's options. */
export const OPTION_TYPES: ReadonlySet<CustomFieldType> = new Set(["select", "multiSelect"]);

/**
 * The limits of docs/api-contract.md §8.1 for custom fields: active fields per resource and organisation, archived
 * fields awaiting their purge per resource and organisation (while it has that many, no field of the resource is
 * created), options per field, picks of a multiSelect value, characters of a text value, bytes of a record's
 * `customFields` as JSON (UTF-8, archived fields' stored values included), the largest magnitude of a number or an
 * amount, the days an archived field's values are kept.
 */
export const CUSTOM_FIELD_LIMITS = {
  activePerResource: 100,
  archivedPerResource: 200,
  options: 200,
  picks: 50,
  text: 1_000,
  recordBytes: 16_384,
  number: 1e15,
  purgeAfterDays: 30,
} as const;

/** A field's key: a lower-case letter, then up to 39 lower-case letters, digits and underscores. */
export const CUSTOM_FIELD_KEY = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * Names a new field's key may not take (docs/api-contract.md §2.13): those of JavaScript's `Object.prototype`
 * (`constructor`, `toString`, `__proto__`, …), which a plain object answers for every key it lacks, so that no
 * client's code (nor a library's) reads an inherited function as a record's value. Only `constructor` also fits
 * {@link CUSTOM_FIELD_KEY}. Fields defined before keep their keys (docs/architecture.md, "Custom fields").
 */
export const RESERVED_CUSTOM_FIELD_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

const KeySchema = z
  .string()
  .max(40)
  .regex(CUSTOM_FIELD_KEY, "must be a lower-case letter followed by up to 39 lower-case letters, digits or _")
  .refine(
    (key) => !RESERVED_CUSTOM_FIELD_KEYS.has(key),
    "is a name of JavaScript's Object.prototype (constructor, toString, …), which every object answers for: choose another key",
  )
  .describe(
    "The field's key in customFields, unique per organisation and resource, never changed: a lower-case letter followed by up to 39 lower-case letters, digits or underscores; not a name of JavaScript's Object.prototype (constructor).",
  )
  .meta({ example: "contract_tier" });

const ResourceSchema = z
  .enum(CUSTOM_FIELD_RESOURCES)
  .describe("The records the field belongs to: account, contact, deal, device or task; never changed.");

const TypeSchema = z
  .enum(CUSTOM_FIELD_TYPES)
  .describe(
    "What the field holds, never changed: text (up to 1,000 characters), number, boolean, date (YYYY-MM-DD), datetime (ISO 8601, stored in UTC), select (one option's value), multiSelect (up to 50 option values), url (http or https), email, currency ({amount, currency} with an ISO 4217 code).",
  );

const LabelSchema = z.string().trim().min(1).max(100).describe("The field's name for people, 1 to 100 characters.");
const DescriptionSchema = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .nullable()
  .describe("What the field is for, 1 to 500 characters; null for none.");
const OptionValueSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^,]+$/, "must not contain commas")
  .describe("The option's value as records carry it: 1 to 100 characters without commas; never changed.");
const OptionLabelSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .describe("The option's name for people, 1 to 100 characters.");

/** One option of a select or multiSelect field as answers show it. */
export const CustomFieldOptionSchema = z
  .object({
    value: z.string().max(100).describe("The value records carry."),
    label: z.string().max(100).describe("The option's name for people."),
    archivedAt: TimestampSchema.nullable().describe(
      "When the option was archived: records keep it, new writes cannot pick it; null while it is active.",
    ),
  })
  .meta({ id: "CustomFieldOption" });

/** A custom field definition as every definition endpoint returns it (docs/api-contract.md §2.13). */
export const CustomFieldSchema = z
  .object({
    id: IdSchema,
    resource: ResourceSchema,
    key: z.string().max(40).describe("The field's key in customFields; unique per organisation and resource."),
    label: z.string().max(100).describe("The field's name for people."),
    type: TypeSchema,
    description: z.string().max(500).nullable().describe("What the field is for; null for none."),
    options: z
      .array(CustomFieldOptionSchema)
      .max(CUSTOM_FIELD_LIMITS.options)
      .nullable()
      .describe(
        `The options of a select or multiSelect field in display order, at most ${CUSTOM_FIELD_LIMITS.options}; null for the other types.`,
      ),
    required: z
      .boolean()
      .describe(
        "Whether creates must give the field a value and updates may not clear it. Records written before it became required may lack it.",
      ),
    searchable: z
      .boolean()
      .describe(
        "Whether quick search (GET /search) finds accounts, contacts, deals and devices by this field's values (tasks are not searched).",
      ),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    archivedAt: TimestampSchema.nullable().describe(
      `When the field was archived (DELETE): it is gone from records and refused on writes, its values are purged ${CUSTOM_FIELD_LIMITS.purgeAfterDays} days later and its key is free again then; null while active.`,
    ),
  })
  .meta({ id: "CustomField", example: CUSTOM_FIELD_EXAMPLE });

/** A custom field definition as returned by the API. */
export type CustomField = z.infer<typeof CustomFieldSchema>;

const OptionInputSchema = z.strictObject({ value: OptionValueSchema, label: OptionLabelSchema });

/** Options must name each value once. */
function uniqueValues(options: ReadonlyArray<{ value: string }> | undefined, ctx: z.core.$RefinementCtx<unknown>) {
  const seen = new Map<string, number>();
  options?.forEach((option, index) => {
    const first = seen.get(option.value);
    if (first !== undefined)
      ctx.addIssue({ code: "custom", path: ["options", index, "value"], message: `duplicates option ${first}` });
    else seen.set(option.value, index);
  });
}

/**
 * Body of `POST /custom-fields` (docs/api-contract.md §4.20): `resource`, `key`, `label` and `type` required; `options`
 * (1 to 200, values unique) for select and multiSelect fields only.
 */
export const CustomFieldCreateSchema = z
  .strictObject({
    resource: ResourceSchema,
    key: KeySchema,
    label: LabelSchema,
    type: TypeSchema,
    description: DescriptionSchema.optional(),
    options: z
      .array(OptionInputSchema)
      .min(1)
      .max(CUSTOM_FIELD_LIMITS.options)
      .describe(
        `select and multiSelect only (required for them): 1 to ${CUSTOM_FIELD_LIMITS.options} options {value, label} in display order, each value once.`,
      )
      .optional(),
    required: z.boolean().describe("Default false.").optional(),
    searchable: z
      .boolean()
      .describe("Whether quick search (GET /search) finds records by this field's values. Default false.")
      .optional(),
  })
  .superRefine((value, ctx) => {
    const picks = OPTION_TYPES.has(value.type);
    if (picks && !value.options)
      ctx.addIssue({ code: "custom", path: ["options"], message: `a ${value.type} field needs options` });
    if (!picks && value.options)
      ctx.addIssue({ code: "custom", path: ["options"], message: `a ${value.type} field has no options` });
    uniqueValues(value.options, ctx);
  })
  .meta({ id: "CustomFieldCreate", examples: [CUSTOM_FIELD_CREATE_EXAMPLE] });

/** A validated definition creation body. */
export type CustomFieldCreate = z.infer<typeof CustomFieldCreateSchema>;

/**
 * Body of `PATCH /custom-fields/{id}`: `label`, `description`, `required`, `searchable` and `options`; `resource`, `key`
 * and `type` never change (422 as unknown fields). `options` is the complete list in display order: new values are
 * added, listed ones take the label and `archived` given, and an existing value may not be left out.
 */
export const CustomFieldUpdateSchema = z
  .strictObject({
    id: IdSchema,
    label: LabelSchema.optional(),
    description: DescriptionSchema.optional(),
    required: z
      .boolean()
      .describe(
        "true: creates must give the field a value and updates may not clear it; records without one keep none.",
      )
      .optional(),
    searchable: z
      .boolean()
      .describe(
        "Whether quick search finds records by this field's values; records already holding a value are re-indexed in the background after the request.",
      )
      .optional(),
    options: z
      .array(
        z.strictObject({
          value: OptionValueSchema,
          label: OptionLabelSchema,
          archived: z
            .boolean()
            .describe("true archives the option (records keep it, writes cannot pick it); default false.")
            .optional(),
        }),
      )
      .min(1)
      .max(CUSTOM_FIELD_LIMITS.options)
      .describe(
        `The field's complete list of options in display order (select and multiSelect only): new values are added, listed values take the label and archived flag given. An existing value cannot be removed, only archived. At most ${CUSTOM_FIELD_LIMITS.options}.`,
      )
      .optional(),
  })
  .superRefine((value, ctx) => uniqueValues(value.options, ctx))
  .meta({ examples: [CUSTOM_FIELD_UPDATE_EXAMPLE] });

/** A validated definition update (path id plus changed fields). */
export type CustomFieldUpdate = z.infer<typeof CustomFieldUpdateSchema>;

/** Sortable definition fields. */
export const CUSTOM_FIELD_SORT_FIELDS = {
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
  key: { nullable: false },
} as const;

/** Default definition order: oldest first. */
export const CUSTOM_FIELD_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

/** Query of `GET /custom-fields` (docs/api-contract.md §4.20). */
export const CustomFieldListQuerySchema = z.strictObject({
  ...ListQueryBase,
  sort: sortParam(Object.keys(CUSTOM_FIELD_SORT_FIELDS), "createdAt:asc"),
  resource: ResourceSchema.describe("Only the fields of this resource.").optional(),
  includeArchived: BooleanQuerySchema.describe(
    "true lists archived fields too (until their values are purged); default false.",
  ).optional(),
});

/** A validated definition list query. */
export type CustomFieldListQuery = z.infer<typeof CustomFieldListQuerySchema>;

/** A page of definitions. */
export const CustomFieldListSchema = listOf(CustomFieldSchema);

/** Query of `GET /custom-fields/schema`. */
export const CustomFieldSchemaQuerySchema = z.strictObject({
  resource: ResourceSchema.describe("The resource whose customFields the schema describes.").meta({
    example: "account",
  }),
});

/**
 * `data` of `GET /custom-fields/schema`: a JSON Schema (2020-12) of one resource's `customFields` in the
 * organisation, one property per active field.
 */
export const CustomFieldJsonSchemaSchema = z
  .object({
    $schema: z.literal("https://json-schema.org/draft/2020-12/schema").describe("The JSON Schema dialect."),
    title: z.string().max(200).describe("What the schema describes."),
    description: z.string().max(1_000).describe("How to read it."),
    type: z.literal("object").describe("customFields is an object."),
    properties: z
      .record(z.string().max(40), z.record(z.string().max(64), z.unknown()))
      .describe("One JSON Schema per active field, keyed by the field's key."),
    additionalProperties: z.literal(false).describe("Keys of no active field never appear."),
  })
  .meta({ id: "CustomFieldJsonSchema", example: CUSTOM_FIELD_SCHEMA_EXAMPLE });

/** The JSON Schema answer. */
export type CustomFieldJsonSchema = z.infer<typeof CustomFieldJsonSchemaSchema>;

/** An amount of money in a currency: a `currency` field's value. */
export const MoneySchema = z
  .strictObject({
    amount: z
      .number()
      .min(-CUSTOM_FIELD_LIMITS.number)
      .max(CUSTOM_FIELD_LIMITS.number)
      .describe("The amount, a JSON number."),
    currency: z
      .string()
      .length(3)
      .regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as EUR")
      .describe("ISO 4217 currency code, e.g. EUR."),
  })
  .meta({ id: "Money" });

/** One custom field value as records carry it: the JSON form of the field's type. */
const CustomFieldValueSchema = z
  .union([
    z.string().max(2_048).describe("text, date (YYYY-MM-DD), datetime (ISO 8601 UTC), select, url or email."),
    z.number().min(-CUSTOM_FIELD_LIMITS.number).max(CUSTOM_FIELD_LIMITS.number).describe("number."),
    z.boolean().describe("boolean."),
    z.array(z.string().max(100)).max(CUSTOM_FIELD_LIMITS.picks).describe("multiSelect: the values picked."),
    MoneySchema.describe("currency."),
  ])
  .meta({ id: "CustomFieldValue" });

const VALUES_TEXT = `The record's custom field values keyed by field key: strings for text, date (YYYY-MM-DD), datetime (ISO 8601 UTC with milliseconds), select, url and email fields, JSON numbers, booleans, arrays of option values for multiSelect, {amount, currency} for currency. A field without a value is absent. The organisation's fields: GET /custom-fields, or GET /custom-fields/schema?resource=… as JSON Schema.`;

/** `customFields` of a record as every read, list, bulk answer, event and webhook carries it. */
export const CustomFieldValuesSchema = z
  .record(z.string().max(40).regex(CUSTOM_FIELD_KEY), CustomFieldValueSchema)
  .describe(VALUES_TEXT)
  .meta({ id: "CustomFieldValues", example: CUSTOM_FIELD_VALUES_EXAMPLE, maxProperties: 100 });

/** A record's custom field values. */
export type CustomFieldValues = z.infer<typeof CustomFieldValuesSchema>;

/**
 * `customFields` in a create, update or bulk item: values by field key, checked against the organisation's fields
 * (docs/api-contract.md §2.13); in an update `null` clears a key and keys left out keep their values.
 */
export const CustomFieldsInputSchema = z
  .record(z.string().max(40).regex(CUSTOM_FIELD_KEY, "is not a custom field key"), CustomFieldValueSchema.nullable())
  .refine((values) => Object.keys(values).length <= CUSTOM_FIELD_LIMITS.activePerResource, {
    message: `at most ${CUSTOM_FIELD_LIMITS.activePerResource} fields`,
  })
  .describe(
    "Custom field values by field key, each of the field's type. On create a required field must be given; on update keys left out keep their values and null clears one (not a required one). An unknown or archived key, a value of the wrong type, an archived option or more than 16,384 bytes of values on the record is 422 naming customFields.<key>.",
  )
  .meta({ example: CUSTOM_FIELD_VALUES_EXAMPLE, maxProperties: 100 });

/** A custom field query parameter of a list: `customFields.<key>` or `customFields.<key>[<op>]`. */
export const CUSTOM_FIELD_PARAM = /^customFields\.([a-z][a-z0-9_]{0,39})(?:\[([a-z]+)\])?$/;

/** What every list of a resource with custom fields says about filtering and sorting by them. */
export const CUSTOM_FIELD_LIST_TEXT =
  "Custom fields filter and sort like the record's own fields: customFields.<key>=value (equal), customFields.<key>[op]=value with the operators of the field's type (eq, ne, gt, gte, lt, lte, in, contains of 1 to 100 characters), and sort=customFields.<key>:asc|desc. An unknown or archived key, an operator the type has not or a malformed value is 422 naming the parameter. A request takes at most 30 filter parameters, field[op] and customFields ones together.";

/** A `field[op]` filter parameter of a list (docs/api-contract.md §4.9.3). */
const FILTER_PARAM = /\[[a-z]+\]$/;

/**
 * A list query that also takes the custom field parameters of {@link CUSTOM_FIELD_PARAM} (their keys depend on the
 * organisation, so the OpenAPI document describes them in words, not as parameters); any other unknown parameter is
 * refused as before (422). The filter parameters, `field[op]` and custom field ones together, are at most
 * {@link FILTER_LIMITS}.perList (docs/api-contract.md §8.1): each one past it, in the order the list documents its
 * parameters (custom field ones last), is 422 naming it.
 */
export function withCustomFieldParams<Shape extends z.ZodRawShape>(shape: Shape) {
  return z
    .strictObject(shape)
    .catchall(z.string().max(5_000))
    .superRefine((query, ctx) => {
      const names = Object.keys(query).filter((name) => query[name] !== undefined);
      const unknown = names.filter((name) => !Object.hasOwn(shape, name) && !CUSTOM_FIELD_PARAM.test(name));
      if (unknown.length > 0) ctx.addIssue({ code: "unrecognized_keys", keys: unknown, input: query, path: [] });
      const filters = names.filter((name) => CUSTOM_FIELD_PARAM.test(name) || FILTER_PARAM.test(name));
      // The ones past the limit in the order the list documents them, custom field parameters last.
      for (const name of filters.slice(FILTER_LIMITS.perList)) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `is one of ${filters.length} filter parameters: a list takes at most ${FILTER_LIMITS.perList} (docs/api-contract.md §8.1)`,
        });
      }
    });
}
