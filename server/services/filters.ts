// The Prisma conditions of list filters (docs/api-contract.md §4.9.3) and of structured search's filter groups
// (docs/api-contract.md §4.18): one builder for every list.
import { containsInsensitive, equalsInsensitive } from "../db/like";
import { type FilterKind, type FilterOperator, type FilterTable, filterTerms } from "../schemas/filters";

type Where = Record<string, unknown>;

/**
 * Structured search's filter groups on a list query (docs/api-contract.md §4.18): a list query carrying them under this
 * key (`POST /{resource}/search`) runs through its list's own code path, which adds the groups, an OR of ANDs of
 * {@link SearchTerm}s, to its filters.
 */
export const FILTER_GROUPS: unique symbol = Symbol("structured search filter groups");

/** An operator of structured search (docs/api-contract.md §4.18): the list filters', presence, an inclusive range. */
export type SearchOperator = FilterOperator | "exists" | "notExists" | "between";

/**
 * One filter of a structured search group (docs/api-contract.md §4.18): a list filter term whose value is already parsed
 * (`in` and `between` take arrays).
 */
export interface SearchTerm {
  field: string;
  op: SearchOperator;
  kind: FilterKind;
  value: unknown;
}

/**
 * The Prisma condition of one filter (docs/api-contract.md §4.9.3, §4.18): text `eq` and `in` match case-insensitively
 * and literally, `contains` literally and case-insensitively; an external key's `eq`, `ne` and `in` compare exactly, as
 * its uniqueness does, on values the query schema normalised to Unicode NFC (docs/architecture.md, "Data and
 * migrations"); `ne` does not match records whose field is empty (SQL's comparison with NULL); dates are compared as
 * instants; `exists` / `notExists` match a field with / without a value; `between` is inclusive.
 * @param value the value as validated: a scalar, or for `in` and `between` an array (`between`: `[low, high]`).
 */
export function termWhere(field: string, kind: FilterKind, op: SearchOperator, value: unknown): Where {
  const read = (one: unknown): unknown =>
    kind === "number" ? Number(one) : kind === "date" ? new Date(String(one)) : String(one);
  const caseless = kind === "text";
  const equals = (one: unknown) => (caseless ? equalsInsensitive(String(one)) : read(one));
  switch (op) {
    case "eq":
      return { [field]: equals(value) };
    case "ne":
      return { NOT: { [field]: equals(value) } };
    case "in": {
      const values = value as unknown[];
      return caseless
        ? { OR: values.map((one) => ({ [field]: equalsInsensitive(String(one)) })) }
        : { [field]: { in: values.map(read) } };
    }
    case "contains":
      return { [field]: containsInsensitive(String(value)) };
    case "exists":
      return { NOT: { [field]: null } };
    case "notExists":
      return { [field]: null };
    case "between": {
      const [low, high] = value as [unknown, unknown];
      return { [field]: { gte: read(low), lte: read(high) } };
    }
    default:
      return { [field]: { [op]: read(value) } };
  }
}

/**
 * The conditions of the `field[op]` filters a parsed list query holds (an `in` value is its comma-separated list), to
 * add to the list's `filters`, and the condition of structured search's filter groups when the query carries them
 * under {@link FILTER_GROUPS}.
 */
export function filterWhere(query: Readonly<Record<string | symbol, unknown>>, table: FilterTable): Where[] {
  const terms = filterTerms(query, table).map(({ field, op, kind, value }) =>
    termWhere(field, kind, op, op === "in" ? String(value).split(",") : value),
  );
  const groups = query[FILTER_GROUPS] as readonly (readonly SearchTerm[])[] | undefined;
  if (!groups || groups.length === 0) return terms;
  const or = groups.map((group) => ({
    AND: group.map((term) => termWhere(term.field, term.kind, term.op, term.value)),
  }));
  return [...terms, { OR: or }];
}
