// Quick search (docs/api-contract.md §4.17; docs/architecture.md, "Search"): one query over the organisation's
// `SearchEntry` rows, which triggers keep in the transaction of every write of accounts, contacts, deals and devices
// (migration 20261127130100_search), so a record is findable by the next request after its write commits. Words are
// prefixes, case- and accent-insensitive (`search_query`); results are ranked and paged by keyset on (rank, id, type),
// so any page costs what the first one does and there is no cap on how far one pages. When nothing matches as written,
// the same search runs typo-tolerant over the records' labels (trigrams).

import { Prisma } from "../../db/generated/client";
import { prisma } from "../../db/transaction";
import { ApiError } from "../../errors";
import { hasScope } from "../../platform/api-keys/scopes";
import { CURSOR_KINDS, notACursor, openCursor, sealCursor } from "../pagination";
import { SEARCH_TYPE_SCOPES, SEARCH_TYPES, type SearchQuery, type SearchResult, type SearchType } from "./schema";

/** Shortest query, normalised, that runs typo-tolerant when nothing matches: shorter ones share trigrams with most. */
const FUZZY_MIN_LENGTH = 4;

/** Ranks are computed and compared in millionths, as integers, so a cursor's rank compares exactly. */
const RANK_SCALE = 1_000_000;

/** How a search matches: its words as prefixes (`text`), or its whole text as a near word of a label (`fuzzy`). */
const MODES = ["text", "fuzzy"] as const;
type Mode = (typeof MODES)[number];

/** Where a page ends: the last result's rank (in millionths), id and type. */
interface Position {
  mode: Mode;
  rank: bigint;
  id: string;
  type: SearchType;
}

/** What a cursor is signed for: the organisation, the types and q, so it opens for the same search only. */
function searchContext(orgId: string, q: string, types: readonly SearchType[]): string {
  return `search\0${orgId}\0${[...types].sort().join(",")}\0${q}`;
}

/**
 * A cursor, signed with the project's cursor key (`sealCursor`): the mode, the rank (8 bytes), the type and the id
 * (at most 64 characters: a cursor of at most 116 characters).
 */
function encodeCursor(position: Position, context: string): string {
  const head = Buffer.alloc(10);
  head.writeUInt8(MODES.indexOf(position.mode), 0);
  head.writeBigInt64BE(position.rank, 1);
  head.writeUInt8(SEARCH_TYPES.indexOf(position.type), 9);
  return sealCursor(CURSOR_KINDS.search, Buffer.concat([head, Buffer.from(position.id, "utf8")]), context);
}

/**
 * Reads a cursor of this search.
 * @throws ApiError `bad_request` (400) for a string the service did not make, or made for another search.
 */
function decodeCursor(cursor: string, context: string): Position {
  const opened = openCursor(cursor, context);
  if (opened?.kind !== CURSOR_KINDS.search || opened.payload.length < 11) throw notACursor();
  const mode = MODES[opened.payload.readUInt8(0)];
  const type = SEARCH_TYPES[opened.payload.readUInt8(9)];
  if (!mode || !type) throw notACursor();
  return { mode, rank: opened.payload.readBigInt64BE(1), type, id: opened.payload.subarray(10).toString("utf8") };
}

/**
 * The types a search covers (docs/api-contract.md §4.17): those asked for (`types`), else every type the key may read.
 * @throws ApiError `insufficient_scope` (403) naming a type asked for whose read scope the key lacks.
 */
export function searchTypes(scopes: readonly string[], asked: string | undefined): SearchType[] {
  const readable = SEARCH_TYPES.filter((type) => hasScope(scopes, SEARCH_TYPE_SCOPES[type]));
  if (asked === undefined) return readable;
  const wanted = [...new Set(asked.split(","))] as SearchType[];
  const refused = wanted.filter((type) => !readable.includes(type));
  if (refused.length > 0) {
    throw new ApiError(
      "insufficient_scope",
      `This API key cannot read ${refused.join(", ")}: searching them needs ${refused.map((type) => SEARCH_TYPE_SCOPES[type]).join(", ")}`,
    );
  }
  return wanted;
}

interface Row {
  type: SearchType;
  id: string;
  label: string;
  sublabel: string | null;
  rank: bigint;
}

/**
 * One page of results of `mode`. The rank is computed per row by PostgreSQL in millionths, an integer, so the keyset
 * comparison with a cursor's rank is exact: text mode, `ts_rank` over the weighted words (A label, B identifiers, C
 * searchable custom values) plus
 * 1 when the normalised label equals the normalised query and 0.5 when it starts with it; fuzzy mode, the strict word
 * similarity of the query to the label (pg_trgm, at least 0.5).
 */
function page(
  orgId: string,
  q: string,
  types: readonly SearchType[],
  mode: Mode,
  after: Position | null,
  take: number,
) {
  // The query's tsquery and normalised text are computed once (InitPlans), never per row: a prepared statement's
  // generic plan does not fold the functions of a parameter into constants (a search matching 100,000 entries took
  // 7.5 s that way, 0.7 s this way).
  const tsquery = Prisma.sql`(SELECT "search_query"(${q}))`;
  const normalised = Prisma.sql`(SELECT "search_normalise"(${q}))`;
  const rank =
    mode === "text"
      ? Prisma.sql`ts_rank(s."document", ${tsquery})
          + CASE WHEN s."fuzzy" = ${normalised} THEN 1 WHEN starts_with(s."fuzzy", ${normalised}) THEN 0.5 ELSE 0 END`
      : Prisma.sql`strict_word_similarity(${normalised}, s."fuzzy")`;
  const match = mode === "text" ? Prisma.sql`s."document" @@ ${tsquery}` : Prisma.sql`${normalised} <<% s."fuzzy"`;
  const seek = after
    ? Prisma.sql`AND (r."rank" < ${after.rank}
        OR (r."rank" = ${after.rank} AND (s."id" COLLATE "C", s."type" COLLATE "C") > (${after.id}, ${after.type})))`
    : Prisma.empty;
  return prisma().$queryRaw<Row[]>`
    SELECT s."type", s."id", s."label", s."sublabel", r."rank"
    FROM "SearchEntry" AS s
    CROSS JOIN LATERAL (SELECT round((${rank}) * ${RANK_SCALE})::bigint AS "rank") AS r
    WHERE s."orgId" = ${orgId} AND s."type" = ANY(${types}::text[]) AND ${match}
      ${seek}
    ORDER BY r."rank" DESC, s."id" COLLATE "C", s."type" COLLATE "C"
    LIMIT ${take}`;
}

/**
 * Quick search over the organisation's accounts, contacts, deals and devices (docs/api-contract.md §4.17): words of `q`
 * as prefixes, case- and accent-insensitive, every word required (with several words, also run together: "ws 001"
 * finds "WS001"), over each type's identifying text (account name, domain, externalId; contact names, email and its
 * domain, phone number and its digits; deal name; device hostname and RMM agent id; values of custom fields marked
 * `searchable`, weight C), ranked best first. When the first
 * page finds nothing and `q` has at least {@link FUZZY_MIN_LENGTH} characters, records whose label is near `q` (a
 * typo) are returned instead, ranked by similarity (below 1). Only the types the key may read are searched.
 * @param scopes the key's granted scopes.
 * @returns `{ data, hasMore, nextCursor }`: `nextCursor` continues the same search after the last result (null on an
 *          empty page); pages never repeat or skip a result while the records are unchanged.
 * @throws ApiError `insufficient_scope` (403) when `types` names a type the key may not read; `bad_request` (400) for a
 *         cursor of another search (organisation, q or types) or none of ours.
 */
export async function quickSearch(
  orgId: string,
  scopes: readonly string[],
  query: SearchQuery,
): Promise<{ data: SearchResult[]; hasMore: boolean; nextCursor: string | null }> {
  const types = searchTypes(scopes, query.types);
  const context = searchContext(orgId, query.q, types);
  const after = query.cursor !== undefined ? decodeCursor(query.cursor, context) : null;
  let mode: Mode = after?.mode ?? "text";
  let rows = types.length === 0 ? [] : await page(orgId, query.q, types, mode, after, query.limit + 1);
  if (!after && rows.length === 0 && types.length > 0 && query.q.length >= FUZZY_MIN_LENGTH) {
    mode = "fuzzy";
    rows = await page(orgId, query.q, types, mode, null, query.limit + 1);
  }
  const hasMore = rows.length > query.limit;
  const shown = hasMore ? rows.slice(0, query.limit) : rows;
  const last = shown.at(-1);
  return {
    data: shown.map((row) => ({ ...row, rank: Number(row.rank) / RANK_SCALE })),
    hasMore,
    nextCursor: last ? encodeCursor({ mode, rank: last.rank, id: last.id, type: last.type }, context) : null,
  };
}
