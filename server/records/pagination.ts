// Keyset pages and the cursors that continue them (docs/architecture.md, "Data and migrations" and "Cursors and
// sort"). A list's cursor is the id of the last record of a page, as the contract this API was first specified by has
// it; the signed cursors lists made before (base64url of a kind byte, the id and the first 12 bytes of an HMAC-SHA256
// under a key derived from the server's secret) still open, and the events feed and quick search keep signed cursors,
// whose positions are not a record's. How a list handles an invalid `sort` is the request's preference (RFC 7240).
import { AsyncLocalStorage } from "node:async_hooks";
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { IdSchema, parseSortParam, type SortTerm } from "../contract/common";
import { ApiError } from "../errors";
import { authSecret } from "../identity/secret";

export type { SortTerm } from "../contract/common";

/** A sortable field of a resource: whether it can be null (null values sort last in both directions). */
export type SortableFields = Record<string, { nullable: boolean }>;

/** Bytes of the HMAC-SHA256 a cursor carries: 96 bits, beyond guessing by requests. */
const CURSOR_MAC_BYTES = 12;
let cursorKey: Buffer | undefined;

/** The cursors' key: HKDF-SHA256 of the server's secret (`BETTER_AUTH_SECRET`, or the embedded `auth-secret`). */
function key(): Buffer {
  cursorKey ??= Buffer.from(hkdfSync("sha256", authSecret(), "", "crm cursor v1", 32));
  return cursorKey;
}

function mac(body: Buffer, context: string): Buffer {
  return createHmac("sha256", key()).update(`${context}\0`).update(body).digest().subarray(0, CURSOR_MAC_BYTES);
}

/**
 * What a signed cursor holds: a record id as text or as a number (the lists' cursors before they answered the id
 * itself, still read), a position in the events feed, or a position in a quick search's results (rank, id, type:
 * server/records/search/service.ts).
 */
export const CURSOR_KINDS = { text: 1, number: 2, feed: 3, search: 4 } as const;

/**
 * Signs a cursor: base64url of `kind`, `payload` and its MAC over both and `context` (a feed cursor's organisation, so
 * it opens in that organisation's feed only).
 */
export function sealCursor(kind: number, payload: Uint8Array, context = ""): string {
  const body = Buffer.concat([Buffer.of(kind), payload]);
  return Buffer.concat([body, mac(body, context)]).toString("base64url");
}

/**
 * Opens a cursor {@link sealCursor} made with the same `context`.
 * @returns its kind and payload; null for anything else (another encoding, a changed byte, another context).
 */
export function openCursor(cursor: string, context = ""): { kind: number; payload: Buffer } | null {
  const bytes = Buffer.from(cursor, "base64url");
  // Node's decoder skips characters outside the alphabet: only the canonical text of the bytes is a cursor.
  if (bytes.length <= CURSOR_MAC_BYTES + 1 || bytes.toString("base64url") !== cursor) return null;
  const body = bytes.subarray(0, -CURSOR_MAC_BYTES);
  if (!timingSafeEqual(bytes.subarray(-CURSOR_MAC_BYTES), mac(body, context))) return null;
  return { kind: body[0] as number, payload: body.subarray(1) };
}

/**
 * The record id a list's `cursor` names: the id itself (docs/api-contract.md §4.9.1), or a signed cursor of the form
 * lists answered before ids (a text id, or a numeric id as 8 bytes), which keeps working.
 * @throws ApiError `bad_request` (400) for anything else: not a record id's form (docs/api-contract.md §2.2) and not a
 *   signed list cursor (docs/api-contract.md §4.9.1).
 */
export function readListCursor(cursor: string): string {
  const opened = openCursor(cursor);
  if (opened?.kind === CURSOR_KINDS.number && opened.payload.length === 8)
    return opened.payload.readBigUInt64BE().toString();
  if (opened?.kind === CURSOR_KINDS.text) return opened.payload.toString("utf8");
  if (opened === null && IdSchema.safeParse(cursor).success) return cursor;
  throw notACursor();
}

/**
 * 400 `bad_request` for a cursor the service did not make, on every list and the events feed alike
 * (docs/api-contract.md §4.9.1, §7).
 */
export function notACursor(): ApiError {
  return new ApiError(
    "bad_request",
    "cursor is neither a nextCursor of this service nor an id this list takes; start without a cursor",
    {
      details: [{ path: ["cursor"], message: "not a cursor of this service" }],
    },
  );
}

/**
 * How the lists of one request handle an invalid `sort` (docs/api-contract.md §4.9): `strict` when the request sent
 * `Prefer: handling=strict` (RFC 7240), and what lenient handling ignored, for the answer's headers.
 */
export interface SortHandling {
  strict: boolean;
  /** Whether a list read a `sort` the request gave. */
  sorted: boolean;
  /** The pairs of `sort` that lenient handling ignored, as sent. */
  ignored: string[];
}

// The facade sets the handling around each request (server/http/preferences.ts); a list reads it where it parses
// `sort`, as deep as the kit's statements, so that no procedure and service between the two has to pass it on.
const handlingScope = new AsyncLocalStorage<SortHandling>();

/**
 * Runs `work` with the request's sort handling (docs/api-contract.md §4.9); `handling` collects what the lists
 * ignored. Outside of it (the settings pages, scripts), an invalid `sort` is refused: only code sends one there.
 */
export function withSortHandling<T>(handling: SortHandling, work: () => T): T {
  return handlingScope.run(handling, work);
}

/**
 * Parses `sort` against the allow-list (docs/api-contract.md §4.9); the resource's default sort when there is none.
 * An invalid pair (an unknown field, a malformed pair, a repeated field, an empty value or pair) is ignored under
 * lenient handling, the default for API requests, and recorded for the answer's `Sort-Ignored` header; the default
 * applies when no valid pair remains.
 * @param customFields whether the list sorts by `customFields.<key>` too (docs/api-contract.md §4.9.5), for the message.
 * @returns the sort terms without the `id` tie-breaker.
 * @throws ApiError `validation_error` (422) with one detail on `sort` naming the allowed fields for the first invalid
 *   pair under strict handling (`Prefer: handling=strict`, and outside an API request).
 */
export function parseSort(
  raw: string | undefined,
  allowed: SortableFields,
  fallback: readonly SortTerm[],
  customFields = false,
): SortTerm[] {
  if (raw === undefined) return [...fallback];
  const handling = handlingScope.getStore();
  const { terms, invalid } = parseSortParam(raw, Object.keys(allowed), customFields);
  if (handling) handling.sorted = true;
  const [first] = invalid;
  if (first) {
    if (!handling || handling.strict) {
      throw new ApiError("validation_error", `sort: ${first.reason}`, {
        details: [{ path: ["sort"], message: first.reason }],
        ...(handling ? { headers: { "Preference-Applied": "handling=strict" } } : {}),
      });
    }
    handling.ignored.push(...invalid.map((pair) => pair.pair));
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
 * after that record (docs/api-contract.md §4.9.1).
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
 * 400 `bad_request` for a cursor that names no record of this organisation's list (deleted since, another list's or
 * another organisation's) (docs/api-contract.md §4.9.1, §7).
 */
export function unknownCursor(): ApiError {
  return new ApiError("bad_request", "cursor names no record of this list; restart from the first page", {
    details: [{ path: ["cursor"], message: "unknown cursor" }],
  });
}

/** The list query fields every list endpoint shares (docs/api-contract.md §4.9). */
export interface ListQuery {
  limit: number;
  cursor?: string;
  sort?: string;
  updatedAfter?: string;
}

/**
 * Runs one keyset page of a list endpoint (docs/api-contract.md §4.9): reads the cursor's record id and resolves its
 * record (400 `bad_request` for a cursor that is neither a record id nor a signed cursor, or one not in the
 * organisation's list), parses `sort` against the allow-list ({@link parseSort}), applies `updatedAfter` (strictly
 * later) and the endpoint's `filters` (which must include the organisation scope), and fetches `limit + 1` rows.
 * @returns `{ data, hasMore, nextCursor }` with rows mapped by `map`.
 * @throws ApiError `bad_request` (400) for a cursor that is not one or names no record of the list;
 *   `validation_error` (422) for an invalid `sort` under strict handling.
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
  if (query.cursor !== undefined) {
    cursorRow = (await options.findCursor(readListCursor(query.cursor))) ?? undefined;
    if (!cursorRow) throw unknownCursor();
  }
  const page = keyset(terms, options.fields, cursorRow);
  const where: Where[] = [...options.filters];
  if (query.updatedAfter) where.push({ updatedAt: { gt: new Date(query.updatedAfter) } });
  if (page.where) where.push(page.where);
  const rows = await options.findMany({ where: { AND: where }, orderBy: page.orderBy, take: query.limit + 1 });
  const { rows: pageRows, hasMore, nextCursor } = toPage(rows, query.limit);
  return { data: pageRows.map(options.map), hasMore, nextCursor };
}
