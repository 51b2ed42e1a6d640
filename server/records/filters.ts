// The SQL conditions of list filters (docs/api-contract.md §4.9.3) and of structured search's filter groups
// (docs/api-contract.md §4.18): one builder for every record list, whose statement the kit generates
// (`defineResource` in server/records/resource.ts).
import { type FilterKind, type FilterOperator, type FilterTable, filterTerms } from "./filters.schema";

/**
 * Collects the parameters of one SQL statement: `add` returns the placeholder of a new parameter (`$2`, …); `fold`,
 * where the statement offers it, returns what stands for a text expression of the row folded for `contains` (lower
 * case, UTF-8 bytes), computed once per row however many filters read it.
 */
export interface SqlParams {
  add(value: unknown): string;
  fold?(expression: string): string;
  /** The placeholder of the organisation's id (`$1`), for conditions an index keyed by organisation serves. */
  organisation?: string;
}

/** SQL: `expression` folded for {@link containsSql}: PostgreSQL's `lower`, as UTF-8 bytes. */
export function foldSql(expression: string): string {
  return `convert_to(lower(${expression}), 'UTF8')`;
}

/**
 * Structured search's filter groups on a list query (docs/api-contract.md §4.18): a list query carrying them under this
 * key (`POST /{resource}/search`) runs through its list's own code path, which adds the groups, an OR of ANDs of
 * {@link SearchTerm}s, to its filters.
 */
export const FILTER_GROUPS: unique symbol = Symbol("structured search filter groups");

/** An operator of structured search (docs/api-contract.md §4.18): the list filters', presence, an inclusive range. */
export type SearchOperator = FilterOperator | "exists" | "notExists" | "between";

/**
 * One filter of a structured search group (docs/api-contract.md §4.18), or of a list: a filter term whose value is a
 * scalar, or for `in` an array or comma-separated text, for `between` `[low, high]`.
 */
export interface SearchTerm {
  field: string;
  op: SearchOperator;
  kind: FilterKind;
  value: unknown;
}

/**
 * A filtered column as the statement reads it: its SQL over the record's row `t`, and the SQL type compared values
 * are cast to (`timestamp` columns take ISO 8601 times with a time zone, compared as instants in UTC).
 */
export interface FilteredColumn {
  expression: string;
  cast: string;
}

const SYMBOLS = { eq: "=", ne: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/**
 * SQL: the text `expression` contains `needle`, case-insensitively and literally (docs/api-contract.md §4.9.3). Both
 * sides are normalised by PostgreSQL's `lower` (the one case folding `ILIKE` applies) and compared as UTF-8 bytes with
 * `position`, which checks each place with one `memcmp`: no pattern language, no backtracking, and the cost of a row
 * is bounded by the lengths of the value and of the needle, which `contains` keeps to 100 characters
 * (docs/architecture.md, "Data and migrations"). A match of UTF-8 bytes is a match of characters (no character's
 * encoding contains another's). The needle is normalised once per statement (a sub-select), not per row, and the row's
 * value once per row where the statement folds it ({@link SqlParams} `fold`): five groups filtering one long field
 * then lower-case it once, not five times.
 */
export function containsSql(expression: string, needle: string, params: SqlParams): string {
  const haystack = params.fold ? params.fold(expression) : foldSql(expression);
  return `position((SELECT ${foldSql(`${params.add(needle)}::text`)}) IN ${haystack}) > 0`;
}

/**
 * SQL: the text `expression` equals one of `values`, case-insensitively (`lower` on both sides): the value is folded
 * once per row however many values are given, where one `ILIKE` per value folded it once per value.
 */
export function equalsTextSql(expression: string, values: readonly string[], params: SqlParams): string {
  if (values.length === 1) return `lower(${expression}) = lower(${params.add(values[0])}::text)`;
  return `lower(${expression}) = ANY(ARRAY(SELECT lower(v) FROM unnest(${params.add([...values])}::text[]) AS v))`;
}

/**
 * The SQL condition of one filter on `column` (docs/api-contract.md §4.9.3, §4.18): text `eq`, `ne` and `in` match
 * case-insensitively and literally ({@link equalsTextSql}), `contains` literally and case-insensitively
 * ({@link containsSql}); an external key's `eq`, `ne` and `in` compare exactly, as its uniqueness does, on values the
 * query schema normalised to Unicode NFC (docs/architecture.md, "Data and migrations"); `ne` does not match records
 * whose field is empty (SQL's comparison with NULL); numbers compare as numbers, times as instants; `exists` /
 * `notExists` match a field with / without a value; `between` is inclusive.
 */
export function termSql(term: SearchTerm, column: FilteredColumn, params: SqlParams): string {
  const { expression, cast } = column;
  const values = (value: unknown) => (Array.isArray(value) ? value : String(value).split(","));
  if (term.op === "exists") return `${expression} IS NOT NULL`;
  if (term.op === "notExists") return `${expression} IS NULL`;
  if (term.op === "contains") return containsSql(expression, String(term.value), params);
  if (term.kind === "text") {
    if (term.op === "eq") return equalsTextSql(expression, [String(term.value)], params);
    if (term.op === "ne") return `NOT (${equalsTextSql(expression, [String(term.value)], params)})`;
    if (term.op === "in") return equalsTextSql(expression, values(term.value).map(String), params);
  }
  if (term.kind === "number" && cast === "bigint") return integerTermSql(term, expression, params);
  const type = term.kind === "number" ? "numeric" : cast;
  const value = (one: unknown) =>
    type === "timestamp"
      ? `(${params.add(String(one))}::timestamptz AT TIME ZONE 'UTC')`
      : `${params.add(String(one))}::${type}`;
  if (term.op === "in") {
    const list = values(term.value).map(String);
    return type === "timestamp"
      ? `(${list.map((one) => `${expression} = ${value(one)}`).join(" OR ")})`
      : `${expression} = ANY(${params.add(list)}::${type}[])`;
  }
  if (term.op === "between") {
    const [low, high] = term.value as [unknown, unknown];
    return `${expression} BETWEEN ${value(low)} AND ${value(high)}`;
  }
  return `${expression} ${SYMBOLS[term.op]} ${value(term.value)}`;
}

/**
 * SQL: a number filter on an integer column, with each bound rounded to the integers it admits (`> 400.5` is `> 400`,
 * `>= 400.5` is `>= 401`; an `eq` of 400.5 matches nothing) and compared as `bigint`. Comparing the column with a
 * `numeric` value would cast every row to numeric: no index on the column serves that and the planner cannot estimate
 * it, so a selective filter scanned the whole organisation (docs/architecture.md, "Search"). Values are bounded to
 * ±10^12 by the filter schemas, well inside `bigint`.
 */
function integerTermSql(term: SearchTerm, expression: string, params: SqlParams): string {
  const numbers = (value: unknown) => (Array.isArray(value) ? value : String(value).split(",")).map(Number);
  const bound = (value: number) => `${params.add(String(value))}::bigint`;
  const value = Number(Array.isArray(term.value) ? term.value[0] : term.value);
  switch (term.op) {
    case "eq":
      return Number.isInteger(value) ? `${expression} = ${bound(value)}` : "FALSE";
    case "ne":
      return Number.isInteger(value) ? `${expression} <> ${bound(value)}` : `${expression} IS NOT NULL`;
    case "gt":
      return `${expression} > ${bound(Math.floor(value))}`;
    case "gte":
      return `${expression} >= ${bound(Math.ceil(value))}`;
    case "lt":
      return `${expression} < ${bound(Math.ceil(value))}`;
    case "lte":
      return `${expression} <= ${bound(Math.floor(value))}`;
    case "between": {
      const [low, high] = numbers(term.value);
      return `${expression} BETWEEN ${bound(Math.ceil(low as number))} AND ${bound(Math.floor(high as number))}`;
    }
    case "in": {
      const list = numbers(term.value).filter(Number.isInteger);
      return list.length === 0 ? "FALSE" : `${expression} = ANY(${params.add(list.map(String))}::bigint[])`;
    }
    default:
      throw new Error(`no integer comparison for ${term.op}`);
  }
}

/** The prefix of a structured search filter on a custom field: `customFields.<key>` (docs/api-contract.md §4.18). */
export const CUSTOM_FIELD_FILTER_PREFIX = "customFields.";

/**
 * The SQL condition of a structured search filter on a custom field, which the organisation's definitions decide;
 * `at` is the filter's place in the body (`filterGroups.<g>.filters.<f>`), for a refusal to name.
 */
export type CustomFilterSql = (term: SearchTerm, at: readonly (string | number)[]) => string;

/**
 * The conditions of the `field[op]` filters a parsed list query holds (docs/api-contract.md §4.9.3); structured
 * search's filter groups are {@link groupConditions}.
 * @param columnOf the column a field of `table` is, as the statement reads it.
 */
export function filterConditions(
  query: Readonly<Record<string | symbol, unknown>>,
  table: FilterTable,
  columnOf: (field: string) => FilteredColumn,
  params: SqlParams,
): string[] {
  return filterTerms(query, table).map((term) => termSql(term, columnOf(term.field), params));
}

/** One filter group's SQL condition, and whether an index finds its records (docs/architecture.md, "Search"). */
export interface GroupCondition {
  sql: string;
  seeks: boolean;
}

/** How a list statement reads structured search's filter groups (docs/api-contract.md §4.18). */
export interface GroupSources {
  /** The column a field is, as the statement reads it. */
  columnOf: (field: string) => FilteredColumn;
  /** Fields an index of the table leads with after `orgId` (docs/architecture.md, "Search"). */
  indexed?: readonly string[];
  /** The condition of a filter on `customFields.<key>`, for a resource with custom fields. */
  customFilter?: CustomFilterSql;
  /** Whether the table's index of custom field values serves a filter on `customFields.<key>`. */
  customSeeks?: (term: SearchTerm) => boolean;
}

// Operators an index on the column serves when the column is compared as itself (not folded by `lower`).
const SEEKING_OPERATORS: ReadonlySet<SearchOperator> = new Set([
  "eq",
  "in",
  "gt",
  "gte",
  "lt",
  "lte",
  "between",
  "exists",
  "notExists",
]);

/**
 * The condition of each of structured search's filter groups a list query carries under {@link FILTER_GROUPS}
 * (docs/api-contract.md §4.18), in order, none without groups: a record matches the search when it matches every
 * filter of any one group. A group `seeks` when one of its filters compares an indexed column exactly (text fields
 * compare folded, which their indexes do not serve) or is a custom field's equality (containment, which the table's
 * GIN index serves), so that its records are found without reading the organisation's.
 * @throws ApiError `validation_error` (422) from `customFilter` for a custom field filter the organisation's
 *         definitions refuse, naming `filterGroups.<g>.filters.<f>`.
 */
export function groupConditions(
  query: Readonly<Record<string | symbol, unknown>>,
  params: SqlParams,
  sources: GroupSources,
): GroupCondition[] {
  const groups = query[FILTER_GROUPS] as readonly (readonly SearchTerm[])[] | undefined;
  const indexed = new Set(sources.indexed ?? []);
  return (groups ?? []).map((group, g) => {
    let seeks = false;
    const all = group.map((term, f) => {
      if (sources.customFilter && term.field.startsWith(CUSTOM_FIELD_FILTER_PREFIX)) {
        seeks ||= sources.customSeeks?.(term) === true;
        return sources.customFilter(term, ["filterGroups", g, "filters", f]);
      }
      seeks ||= indexed.has(term.field) && term.kind !== "text" && SEEKING_OPERATORS.has(term.op);
      return termSql(term, sources.columnOf(term.field), params);
    });
    return { sql: `(${all.join(" AND ") || "true"})`, seeks };
  });
}

/** Whether a list query carries a structured search filter on a custom field. */
export function filtersCustomFields(query: Readonly<Record<string | symbol, unknown>>): boolean {
  const groups = query[FILTER_GROUPS] as readonly (readonly SearchTerm[])[] | undefined;
  return (groups ?? []).some((group) => group.some((term) => term.field.startsWith(CUSTOM_FIELD_FILTER_PREFIX)));
}
