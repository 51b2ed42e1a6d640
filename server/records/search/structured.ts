// Structured search (docs/api-contract.md §4.18): `POST /{resource}/search` runs the resource's own list (its filters,
// sort allow-list, keyset pages and serialiser: pagination.ts, filters.ts) with the body's filter groups, an OR of
// ANDs: one more condition, or one limited query per group when an index finds each (resource.ts, `listStatement`;
// docs/architecture.md, "Search"). There is no second filter engine: a group's filter is the condition the list's
// `field[op]` parameter makes (`termSql`).

import { FILTER_GROUPS, type SearchTerm } from "../filters";
import type { FilterKind, FilterTable } from "../filters.schema";
import type { StructuredSearch } from "./schema";

/**
 * The list query a structured search body becomes (docs/api-contract.md §4.18): its `sort`, `limit` and `cursor`, and its filter groups as terms
 * of the list's filters under {@link FILTER_GROUPS} (none when it has no group), for the resource's list function.
 * @param table the resource's filterable fields, which give each filter's kind.
 */
export function listQueryOf(body: StructuredSearch, table: FilterTable) {
  const groups = (body.filterGroups ?? []).map((group) =>
    group.filters.map(
      (filter): SearchTerm => ({
        field: filter.field,
        op: filter.operator,
        kind: table[filter.field] as FilterKind,
        value: filter.value,
      }),
    ),
  );
  return {
    limit: body.limit,
    ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
    ...(body.sort !== undefined ? { sort: body.sort } : {}),
    ...(groups.length > 0 ? { [FILTER_GROUPS]: groups } : {}),
  };
}
