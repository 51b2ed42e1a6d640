// Quick search across record types (docs/api-contract.md §4.17): `GET /search`.
import { z } from "zod";
import {
  CUSTOM_FIELD_PATH,
  cursorParam,
  DateTimeInputSchema,
  IdSchema,
  ListQueryBase,
  NextCursorSchema,
  PAGE_SIZE,
  toNfc,
} from "../../contract/common";
import { SEARCH_PAGE_EXAMPLE, SEARCH_RESULT_EXAMPLE, STRUCTURED_SEARCH_EXAMPLES } from "../../contract/examples";
import type { Scope } from "../../platform/api-keys/scopes";
import {
  CONTAINS_TOO_LONG,
  FILTER_LIMITS,
  FILTER_OPERATORS,
  type FilterKind,
  type FilterTable,
} from "../filters.schema";

/** The record types quick search finds, each with the read scope a key needs to see it (docs/api-contract.md §5.7). */
export const SEARCH_TYPE_SCOPES = {
  account: "accounts:read",
  contact: "contacts:read",
  deal: "deals:read",
  device: "devices:read",
} as const satisfies Record<string, Scope>;

/** A record type of quick search. */
export type SearchType = keyof typeof SEARCH_TYPE_SCOPES;

/** Every record type of quick search, in the order results of equal rank never depend on. */
export const SEARCH_TYPES = Object.keys(SEARCH_TYPE_SCOPES) as SearchType[];

/** Longest `q`, in characters (docs/api-contract.md §4.17). */
export const SEARCH_QUERY_MAX = 200;

/** Default page size of quick search: a search box shows a short list. */
export const SEARCH_PAGE_DEFAULT = 20;

const typeList = new RegExp(`^(${SEARCH_TYPES.join("|")})(,(${SEARCH_TYPES.join("|")}))*$`);

/** Query of `GET /search` (docs/api-contract.md §4.17). */
export const SearchQuerySchema = z.strictObject({
  q: z
    .string()
    .trim()
    .min(1)
    .max(SEARCH_QUERY_MAX)
    .describe(
      `What to find, 1 to ${SEARCH_QUERY_MAX} characters (trimmed): words matched as prefixes of the words of each record's identifying text, case- and accent-insensitively, every word required. When nothing matches, records whose name is close to it (a typo) are returned instead.`,
    )
    .meta({ example: "northw" }),
  types: z
    .string()
    .max(100)
    .regex(typeList, `must be comma-separated types among ${SEARCH_TYPES.join(", ")}`)
    .describe(
      `Comma-separated record types to search: ${SEARCH_TYPES.join(", ")}. Default: every type the key may read. Naming a type whose read scope the key lacks is 403 insufficient_scope.`,
    )
    .meta({ example: "account,contact" })
    .optional(),
  limit: z
    .int()
    .min(1)
    .max(PAGE_SIZE.max)
    .default(SEARCH_PAGE_DEFAULT)
    .describe(`Page size, 1 to ${PAGE_SIZE.max}; default ${SEARCH_PAGE_DEFAULT}. Larger values are refused (422).`),
  cursor: cursorParam(
    "The nextCursor of the previous page of the same search (same q and types; opaque and signed: a result's position is its rank for q, which no record id says). Any other string, a record id included, is 400 bad_request.",
  ),
});

/** A validated quick-search query. */
export type SearchQuery = z.infer<typeof SearchQuerySchema>;

/** One result of quick search (docs/api-contract.md §4.17): `{type, id, label, sublabel, rank}`. */
export const SearchResultSchema = z
  .object({
    type: z.enum(SEARCH_TYPES).describe("The record's type: its GET is /{type}s/{id}."),
    id: IdSchema.describe("The record's id."),
    label: z
      .string()
      .max(255)
      .describe(
        "What to show first: an account's or deal's name, a contact's full name (its email when it has no name), a device's hostname.",
      ),
    sublabel: z
      .string()
      .max(255)
      .nullable()
      .describe(
        "What to show second: an account's domain (else its externalId), a contact's email, a deal's stage, a device's RMM agent id.",
      ),
    rank: z
      .number()
      .min(0)
      .max(1000)
      .describe(
        "How well the record matches, higher first: a word matched in the name counts more than one in other identifying text, and a name equal to the query, or starting with it, more still. Results of a typo-tolerant search (nothing matched as written) rank below 1. Compare ranks within one search only.",
      ),
  })
  .meta({ id: "SearchResult", example: SEARCH_RESULT_EXAMPLE });

/** One quick-search result. */
export type SearchResult = z.infer<typeof SearchResultSchema>;

/**
 * A page of quick-search results, best first (docs/api-contract.md §4.17): `{data, hasMore, nextCursor}`, lifted into
 * the list envelope; `nextCursor` continues the same search.
 */
export const SearchPageSchema = z
  .object({
    data: z.array(SearchResultSchema).max(PAGE_SIZE.max),
    hasMore: z.boolean().describe("false when this page is the end of the results."),
    nextCursor: NextCursorSchema.describe(
      "Opaque: pass it as cursor, with the same q and types, for the next page; null on an empty page.",
    ),
  })
  .meta({ example: SEARCH_PAGE_EXAMPLE });

// Structured search (docs/api-contract.md §4.18): `POST /{resource}/search`.

/** Most filter groups (ORed) of a structured search. */
export const FILTER_GROUPS_MAX = 5;
/** Most filters (ANDed) in one group. */
export const FILTERS_PER_GROUP_MAX = 6;
/** Longest structured search body, in bytes of its JSON without insignificant white space. */
export const SEARCH_BODY_MAX_BYTES = 8_192;

/**
 * Every operator of structured search (docs/api-contract.md §4.18): the list filters' (§4.9.3), presence, and ranges.
 */
export const SEARCH_OPERATORS = [
  "eq",
  "ne",
  "gt",
  "gte",
  "lt",
  "lte",
  "in",
  "contains",
  "exists",
  "notExists",
  "between",
] as const;

/** The operators each kind of field takes in structured search. */
function operatorsOf(kind: FilterKind): readonly (typeof SEARCH_OPERATORS)[number][] {
  const base = FILTER_OPERATORS[typeof kind === "string" ? kind : "enum"];
  const ranged = kind === "number" || kind === "date" ? (["between"] as const) : [];
  return [...base, "exists", "notExists", ...ranged];
}

/** The schema of one value of a field of `kind`. */
function scalarOf(kind: FilterKind): z.ZodType {
  if (kind === "number") return z.number().min(-1e12).max(1e12);
  if (kind === "date") return DateTimeInputSchema;
  if (kind === "id") return IdSchema;
  if (typeof kind === "object") return z.enum(kind.enum as [string, ...string[]]);
  // An external key is compared in Unicode NFC, as it is stored (docs/architecture.md, "Data and migrations").
  if (kind === "key") return z.string().min(1).max(255).overwrite(toNfc);
  return z.string().min(1).max(255);
}

/** A `contains` value: 1 to {@link FILTER_LIMITS}.containsLength characters (docs/api-contract.md §8.1). */
const containsValue = z.string().min(1, CONTAINS_TOO_LONG).max(FILTER_LIMITS.containsLength, CONTAINS_TOO_LONG);

/** What `value` must be for an operator on a field of `kind`. */
function valueFor(kind: FilterKind, operator: string): z.ZodType | null {
  if (operator === "exists" || operator === "notExists") return null;
  // An external key is compared in Unicode NFC, as it is stored, contains too.
  if (operator === "contains") return kind === "key" ? containsValue.overwrite(toNfc) : containsValue;
  if (operator === "in") return z.array(scalarOf(kind)).min(1).max(FILTER_LIMITS.inValues);
  if (operator === "between") {
    return z.tuple([scalarOf(kind), scalarOf(kind)]).refine(([low, high]) => {
      const at = (one: unknown) => (kind === "date" ? Date.parse(String(one)) : Number(one));
      return at(low) <= at(high);
    }, "must be [low, high] with low at most high");
  }
  return scalarOf(kind);
}

/** The shape of a custom field filter's value for an operator; its type is checked against the field's definition. */
function customValueFor(operator: string): z.ZodType {
  const scalar = z.union([z.string().min(1).max(1_000), z.number(), z.boolean()]);
  if (operator === "exists" || operator === "notExists") return z.undefined({ error: `${operator} takes no value` });
  if (operator === "contains") return containsValue;
  if (operator === "in") return z.array(scalar).min(1).max(FILTER_LIMITS.inValues);
  if (operator === "between") return z.tuple([scalar, scalar]);
  return scalar;
}

/**
 * Body of `POST /{resource}/search` for a resource whose filterable fields are `table` and whose list takes `sort`
 * (docs/api-contract.md §4.18): `filterGroups` (0 to {@link FILTER_GROUPS_MAX}, ORed) of `filters` (1 to
 * {@link FILTERS_PER_GROUP_MAX}, ANDed) `{field, operator, value}`, `sort`, `limit` and `cursor` as the list takes
 * them. Each operator must suit its field's kind and `value` its operator: a scalar of the field's type (for `contains`
 * a text of 1 to 100 characters), an array of 1 to 50 for `in`, `[low, high]` for `between`, none for `exists` and
 * `notExists`. The body's JSON is at most
 * {@link SEARCH_BODY_MAX_BYTES} bytes. With `customFields` (the resource has custom fields), a filter may also name
 * `customFields.<key>`; its value's shape is checked here and its key, operator and type by the list against the
 * organisation's definitions. Anything else is refused (422) naming the place.
 */
export function structuredSearchSchema(resource: string, table: FilterTable, sort: z.ZodType, customFields = false) {
  const fields = Object.keys(table) as [string, ...string[]];
  const standard = z.enum(fields);
  const filter = z.strictObject({
    field: (customFields
      ? z.union([
          standard,
          z.string().max(53).regex(CUSTOM_FIELD_PATH, "must be a filterable field or customFields.<key>"),
        ])
      : standard
    ).describe(
      customFields
        ? `A filterable field of ${resource}: ${fields.join(", ")}, or customFields.<key> for a custom field (with the operators of its type, exists, notExists, and between for number, currency, date and datetime fields).`
        : `A filterable field of ${resource}: ${fields.join(", ")}.`,
    ),
    operator: z
      .enum(SEARCH_OPERATORS)
      .describe(
        "eq, ne, in, contains (text, case-insensitive and literal, a value of 1 to 100 characters), gt, gte, lt, lte (numbers and times), exists and notExists (the field has a value, or none), between (numbers and times, inclusive [low, high]). Which apply depends on the field's kind, as for the list's field[op] filters.",
      ),
    value: z
      .unknown()
      .describe(
        "A value of the field's type (a number, an ISO 8601 time with a time zone, a text of 1 to 255 characters, 1 to 100 for contains, an id, an enum value); an array of 1 to 50 of them for in, [low, high] for between; left out for exists and notExists.",
      )
      .optional(),
  });
  return z
    .strictObject({
      filterGroups: z
        .array(
          z.strictObject({
            filters: z
              .array(filter)
              .min(1)
              .max(FILTERS_PER_GROUP_MAX)
              .describe(`1 to ${FILTERS_PER_GROUP_MAX} filters, all of which a record must match.`),
          }),
        )
        .max(FILTER_GROUPS_MAX)
        .describe(
          `0 to ${FILTER_GROUPS_MAX} groups: a record matches when it matches any one group. Empty or left out: every record.`,
        )
        .optional(),
      sort,
      limit: ListQueryBase.limit,
      cursor: cursorParam(
        "The nextCursor of the previous page, with the same filterGroups and sort: the id of a record of the list, after which the page continues (a signed cursor answered before works too). Anything else, or the id of a record the list does not have, gives 400 bad_request.",
      ),
    })
    .superRefine((body, ctx) => {
      if (Buffer.byteLength(JSON.stringify(body)) > SEARCH_BODY_MAX_BYTES) {
        ctx.addIssue({ code: "custom", path: [], message: `must be at most ${SEARCH_BODY_MAX_BYTES} bytes of JSON` });
      }
      body.filterGroups?.forEach((group, g) => {
        group.filters.forEach((one, f) => {
          const at = ["filterGroups", g, "filters", f];
          if (CUSTOM_FIELD_PATH.test(one.field)) {
            // The organisation's definitions decide the rest (the list, 422 naming the same places).
            const shape = customValueFor(one.operator).safeParse(one.value);
            for (const issue of shape.error?.issues ?? []) {
              ctx.addIssue({ code: "custom", path: [...at, "value", ...issue.path], message: issue.message });
            }
            return;
          }
          // The field passed the enum of the table's own fields; an inherited member never stands for a kind.
          if (!Object.hasOwn(table, one.field)) return;
          const kind = table[one.field] as FilterKind;
          if (!operatorsOf(kind).includes(one.operator)) {
            ctx.addIssue({
              code: "custom",
              path: [...at, "operator"],
              message: `${one.operator} does not apply to ${one.field}; use one of ${operatorsOf(kind).join(", ")}`,
            });
            return;
          }
          const expected = valueFor(kind, one.operator);
          if (expected === null) {
            if (one.value !== undefined)
              ctx.addIssue({ code: "custom", path: [...at, "value"], message: `${one.operator} takes no value` });
            return;
          }
          const parsed = expected.safeParse(one.value);
          // The value as its schema reads it (an external key in NFC) is what the list filters with.
          if (parsed.success) one.value = parsed.data;
          else {
            for (const issue of parsed.error.issues) {
              ctx.addIssue({ code: "custom", path: [...at, "value", ...issue.path], message: issue.message });
            }
          }
        });
      });
    })
    .meta({ examples: [STRUCTURED_SEARCH_EXAMPLES[resource] ?? { filterGroups: [] }] });
}

/** A validated structured search body (docs/api-contract.md §4.18). */
export interface StructuredSearch {
  filterGroups?: Array<{
    filters: Array<{ field: string; operator: (typeof SEARCH_OPERATORS)[number]; value?: unknown }>;
  }>;
  sort?: string;
  limit: number;
  cursor?: string;
}
