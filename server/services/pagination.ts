import { ApiError } from "../errors";

/** A sortable field of a resource: whether it can be null (null values sort last in both directions). */
export type SortableFields = Record<string, { nullable: boolean }>;

/** One term of an ORDER BY: field and direction. */
export interface SortTerm {
  field: string;
  direction: "asc" | "desc";
}

/**
 * Parses `sort` (`field:direction` pairs, comma-separated; direction `asc` or `desc`, default `asc`) against an
 * allow-list (docs/api-contract.md §4.9). Unknown fields and malformed pairs are silently ignored; when nothing valid
 * remains the resource's default sort applies. Repeated fields keep their first occurrence.
 * @returns the sort terms without the `id` tie-breaker.
 */
export function parseSort(raw: string | undefined, allowed: SortableFields, fallback: readonly SortTerm[]): SortTerm[] {
  const terms: SortTerm[] = [];
  for (const pair of (raw ?? "").split(",")) {
    const [field = "", direction = "asc", extra] = pair.trim().split(":");
    if (extra !== undefined || !Object.hasOwn(allowed, field) || terms.some((term) => term.field === field)) continue;
    const dir = direction.toLowerCase();
    if (dir !== "asc" && dir !== "desc") continue;
    terms.push({ field, direction: dir });
  }
  return terms.length > 0 ? terms : [...fallback];
}

type Where = Record<string, unknown>;

/**
 * Builds a keyset ("seek") page query for Prisma: `orderBy` over the sort terms plus `id`, and, given the cursor
 * record's values, the `where` that selects rows strictly after it. Never uses OFFSET, so any page costs what the first
 * costs (docs/architecture.md, "Data and migrations"). Null values of nullable fields sort last in both directions.
 */
export function keyset(
  terms: readonly SortTerm[],
  fields: SortableFields,
  cursorRow?: Record<string, unknown>,
): { orderBy: Where[]; where?: Where } {
  // The id breaks ties, in the direction of the first term; a sort that already ends on id needs no tie-breaker.
  const all: SortTerm[] =
    terms.at(-1)?.field === "id" ? [...terms] : [...terms, { field: "id", direction: terms[0]?.direction ?? "asc" }];
  const nullable = (field: string) => fields[field]?.nullable === true;
  const orderBy = all.map(({ field, direction }) =>
    nullable(field) ? { [field]: { sort: direction, nulls: "last" } } : { [field]: direction },
  );
  if (!cursorRow) return { orderBy };

  const branches: Where[] = [];
  const equalities: Where[] = [];
  for (const { field, direction } of all) {
    const value = cursorRow[field];
    if (value !== null && value !== undefined) {
      const beyond = { [field]: { [direction === "asc" ? "gt" : "lt"]: value } };
      branches.push({ AND: [...equalities, nullable(field) ? { OR: [beyond, { [field]: null }] } : beyond] });
    }
    equalities.push({ [field]: value ?? null });
  }
  const where: Where = { OR: branches };
  // A redundant range on the leading column lets PostgreSQL start the index scan at the cursor instead of filtering.
  const lead = all[0];
  const leadValue = lead ? cursorRow[lead.field] : undefined;
  if (lead && !nullable(lead.field) && leadValue !== undefined && leadValue !== null) {
    return {
      orderBy,
      where: { AND: [{ [lead.field]: { [lead.direction === "asc" ? "gte" : "lte"]: leadValue } }, where] },
    };
  }
  return { orderBy, where };
}

/**
 * Cuts a fetched page of `limit + 1` rows into the list envelope fields (docs/api-contract.md §2.1): `hasMore` and
 * `nextCursor`, the id of the last record of the page (null on an empty page). Passing it back as `cursor` continues
 * after that record.
 */
export function toPage<T extends { id: string | bigint }>(
  rows: T[],
  limit: number,
): { rows: T[]; hasMore: boolean; nextCursor: string | null } {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return { rows: page, hasMore, nextCursor: last === undefined ? null : String(last.id) };
}

/**
 * 400 `bad_request` for a cursor that does not name a record of this organisation's list (docs/api-contract.md §4.9,
 * §7).
 */
export function unknownCursor(cursor: string): ApiError {
  return new ApiError(
    "bad_request",
    `cursor ${cursor} does not identify a record of this list; restart from the first page`,
    {
      details: [{ path: ["cursor"], message: "unknown cursor" }],
    },
  );
}

/** The list query fields every list endpoint shares (docs/api-contract.md §4.9). */
export interface ListQuery {
  limit: number;
  cursor?: string;
  sort?: string;
  updatedAfter?: string;
}

/**
 * Runs one keyset page of a list endpoint (docs/api-contract.md §4.9): resolves the cursor record (400 `bad_request`
 * when it is not in the organisation), parses `sort` against the allow-list, applies `updatedAfter` (strictly later)
 * and the endpoint's `filters` (which must include the organisation scope), and fetches `limit + 1` rows.
 * @returns `{ data, hasMore, nextCursor }` with rows mapped by `map`.
 * @throws ApiError `bad_request` (400) for an unknown cursor.
 */
export async function listPage<Row extends { id: string | bigint }, Out>(options: {
  query: ListQuery;
  fields: SortableFields;
  defaultSort: readonly SortTerm[];
  filters: Where[];
  findCursor: (id: string) => Promise<Record<string, unknown> | null>;
  findMany: (args: { where: Where; orderBy: Where[]; take: number }) => Promise<Row[]>;
  map: (row: Row) => Out;
}): Promise<{ data: Out[]; hasMore: boolean; nextCursor: string | null }> {
  const { query } = options;
  const terms = parseSort(query.sort, options.fields, options.defaultSort);
  let cursorRow: Record<string, unknown> | undefined;
  if (query.cursor) {
    cursorRow = (await options.findCursor(query.cursor)) ?? undefined;
    if (!cursorRow) throw unknownCursor(query.cursor);
  }
  const page = keyset(terms, options.fields, cursorRow);
  const where: Where[] = [...options.filters];
  if (query.updatedAfter) where.push({ updatedAt: { gt: new Date(query.updatedAfter) } });
  if (page.where) where.push(page.where);
  const rows = await options.findMany({ where: { AND: where }, orderBy: page.orderBy, take: query.limit + 1 });
  const { rows: pageRows, hasMore, nextCursor } = toPage(rows, query.limit);
  return { data: pageRows.map(options.map), hasMore, nextCursor };
}
