// Filter operators on lists (docs/api-contract.md §4.9.3), Stripe's syntax: `employeeCount[gte]=50`, `stage[in]=A,B`,
// `name[contains]=acme`. Each list declares its filterable fields in one table; every `field[op]` parameter is part
// of its query schema, so the OpenAPI document lists it and generated clients type it, and anything else is refused
// (422) by the strict schema.
import { z } from "zod";
import { DateTimeInputSchema, IdSchema, toNfc } from "../contract/common";

/**
 * What a filterable field holds: its operators and how a value is read. An external key (`key`: `externalId`,
 * `rmmAgentId`) is text whose values are normalised to Unicode NFC as the stored keys are, and whose `eq`, `ne` and
 * `in` compare exactly (case-sensitive), as its uniqueness does (docs/architecture.md, "Data and migrations").
 */
export type FilterKind = "text" | "key" | "id" | "number" | "date" | { enum: readonly string[] };

/**
 * The bounds of a request's filters (docs/api-contract.md §4.9.3, §8.1), so that what one request costs the database is
 * bounded by construction (docs/architecture.md, "Data and migrations"): a `contains` value is 1 to `containsLength`
 * characters, an `in` filter takes 1 to `inValues` values, and a list request takes at most `perList` filter
 * parameters (`field[op]` and `customFields.<key>…` together; as many as a structured search's 5 groups of 6). Each
 * is a 422 `validation_error` naming the parameter (or the body's place) and the limit.
 */
export const FILTER_LIMITS = { containsLength: 100, inValues: 50, perList: 30 } as const;

/** Why a `contains` value is refused: it names the limit (docs/api-contract.md §8.1). */
export const CONTAINS_TOO_LONG = `must be 1 to ${FILTER_LIMITS.containsLength} characters: contains matches text of at most ${FILTER_LIMITS.containsLength} characters (docs/api-contract.md §8.1)`;

/**
 * The operators of each kind of field. `contains` is literal (`%` and `_` match themselves), case-insensitive, and
 * takes at most {@link FILTER_LIMITS}.containsLength characters.
 */
export const FILTER_OPERATORS = {
  text: ["eq", "ne", "in", "contains"],
  key: ["eq", "ne", "in", "contains"],
  id: ["eq", "ne", "in"],
  number: ["eq", "ne", "gt", "gte", "lt", "lte", "in"],
  date: ["gt", "gte", "lt", "lte"],
  enum: ["eq", "ne", "in"],
} as const;

/** One operator. */
export type FilterOperator = (typeof FILTER_OPERATORS)[keyof typeof FILTER_OPERATORS][number];

/** A resource's filterable fields: field name → kind. The field names are the model's column names. */
export type FilterTable = Readonly<Record<string, FilterKind>>;

const OP_TEXT: Record<FilterOperator, string> = {
  eq: "equal to",
  ne: "not equal to (records where the field is empty do not match)",
  gt: "greater than",
  gte: "at least",
  lt: "less than",
  lte: "at most",
  in: `one of (comma-separated, at most ${FILTER_LIMITS.inValues})`,
  contains: `containing, case-insensitively and literally (% and _ match themselves), text of 1 to ${FILTER_LIMITS.containsLength} characters`,
};

function kindOf(kind: FilterKind): keyof typeof FILTER_OPERATORS {
  return typeof kind === "string" ? kind : "enum";
}

// Example values tools show beside each parameter (Postman lists them switched off), one per kind of field.
const EXAMPLES = {
  text: "Northwind",
  id: "cm7k2x0a80001northwind0",
  number: 50,
  date: "2026-11-01T00:00:00Z",
  in: { text: "Northwind,Harbor", id: "cm7k2x0a80001northwind0,cm7k2x0a80009harborlog0", number: "10,50" },
} as const;

/** How an external key's `eq`, `ne` and `in` compare, for their descriptions. */
const KEY_COMPARISON = " (exactly, case-sensitive, after Unicode NFC)";

function valueSchema(field: string, kind: FilterKind, op: FilterOperator): z.ZodType {
  const what = `Only records whose ${field} is ${OP_TEXT[op]}`;
  if (op === "in") {
    const example =
      typeof kind === "object"
        ? kind.enum.slice(0, 2).join(",")
        : EXAMPLES.in[kind === "key" ? "text" : (kind as keyof typeof EXAMPLES.in)];
    const item =
      kind === "number"
        ? "-?\\d+(\\.\\d+)?"
        : kind === "id"
          ? "[A-Za-z0-9_-]{1,64}"
          : typeof kind === "object"
            ? `(${kind.enum.join("|")})`
            : "[^,]{1,255}";
    const values = kind === "key" ? z.string().overwrite(toNfc) : z.string();
    return values
      .max(5_000)
      .regex(
        new RegExp(`^${item}(,${item}){0,${FILTER_LIMITS.inValues - 1}}$`),
        `must be 1 to ${FILTER_LIMITS.inValues} comma-separated values of the field's type`,
      )
      .describe(`${what}${kind === "key" ? KEY_COMPARISON : ""}.`)
      .meta({ example });
  }
  if (kind === "number")
    return z.number().min(-1e12).max(1e12).describe(`${what} this number.`).meta({ example: EXAMPLES.number });
  if (kind === "date")
    return DateTimeInputSchema.describe(`${what} this time (ISO 8601 with a time zone).`).meta({
      example: EXAMPLES.date,
    });
  if (kind === "id") return IdSchema.describe(`${what} this id.`);
  if (typeof kind === "object")
    return z
      .enum(kind.enum as [string, ...string[]])
      .describe(`${what} this value.`)
      .meta({ example: kind.enum[0] });
  if (op === "contains")
    return (kind === "key" ? z.string().overwrite(toNfc) : z.string())
      .min(1, CONTAINS_TOO_LONG)
      .max(FILTER_LIMITS.containsLength, CONTAINS_TOO_LONG)
      .describe(`${what}.`)
      .meta({ example: EXAMPLES.text });
  if (kind === "key")
    return z
      .string()
      .overwrite(toNfc)
      .min(1)
      .max(255)
      .describe(`${what} this text${KEY_COMPARISON}.`)
      .meta({ example: EXAMPLES.text });
  return z
    .string()
    .min(1)
    .max(255)
    .describe(`${what} this text${op === "eq" ? " (case-insensitive)" : ""}.`)
    .meta({ example: EXAMPLES.text });
}

/**
 * The `field[op]` query parameters of a list, every one optional, to spread into its query schema.
 * @returns a zod shape: `{ "employeeCount[gte]": ZodOptional<ZodNumber>, … }`.
 */
export function filterParams(table: FilterTable): Record<string, z.ZodOptional<z.ZodType>> {
  const shape: Record<string, z.ZodOptional<z.ZodType>> = {};
  for (const [field, kind] of Object.entries(table)) {
    for (const op of FILTER_OPERATORS[kindOf(kind)]) shape[`${field}[${op}]`] = valueSchema(field, kind, op).optional();
  }
  return shape;
}

/** The parsed filters of a query: field, operator and value, for the record lists' statement (server/records/resource.ts). */
export interface FilterTerm {
  field: string;
  op: FilterOperator;
  kind: FilterKind;
  value: unknown;
}

/** The filters a parsed query holds, in the table's order. */
export function filterTerms(query: Readonly<Record<string, unknown>>, table: FilterTable): FilterTerm[] {
  const terms: FilterTerm[] = [];
  for (const [field, kind] of Object.entries(table)) {
    for (const op of FILTER_OPERATORS[kindOf(kind)]) {
      const value = query[`${field}[${op}]`];
      if (value !== undefined) terms.push({ field, op, kind, value });
    }
  }
  return terms;
}
