// What every resource shares, written once (docs/architecture.md, "Layers and the request pipeline"): reading one
// record of the organisation or answering 404, locking a record for an update, the changed-fields comparison behind
// every update, and the references a write locks so they cannot vanish before it commits. Keyset pages are
// pagination.ts. A resource file holds only what differs.
import { Prisma } from "../db/generated/client";
import { prisma } from "../db/transaction";
import { ApiError, type ErrorDetail, notFound } from "../errors";

/** Tables of tenant records that other records reference (docs/api-contract.md §2). */
export type ReferencedTable = "Account" | "Contact" | "Deal" | "Contract" | "Lead";

/** The noun used in messages about each referenced table. */
const NOUNS: Record<ReferencedTable, string> = {
  Account: "account",
  Contact: "contact",
  Deal: "deal",
  Contract: "contract",
  Lead: "lead",
};

/** Tables whose rows belong to an account; locking them also returns that `accountId`. */
const OWNED_BY_ACCOUNT = new Set<ReferencedTable>(["Deal", "Contract"]);

/**
 * Reads one row of the organisation by id with a single SQL statement through Prisma's raw query
 * (`SELECT <the select's columns> FROM "<table>" WHERE "orgId" = $1 AND "id" = $2`), inside the enclosing
 * transaction when there is one. Returns what `findFirst({ where: { orgId, id }, select })` returns for a select of
 * plain columns (dates as `Date`, decimals as `Prisma.Decimal`, enums as strings) with about 60 µs less CPU a read
 * (docs/architecture.md, "Memory and speed": the single-record GET is the API's most frequent call, and Prisma's
 * query builder was the largest cost left in it). A select with relations (contacts' account links) stays with Prisma's
 * relation query.
 * @param table the model's table, from the calling service (never from a request).
 * @param select the columns to read: field names as in the Prisma schema, which maps none to other column names.
 * @returns the row, or null when it is missing or another organisation's.
 */
export function rowById<Row>(
  table: string,
  select: { readonly [Field in keyof Row]: true },
): (where: { orgId: string; id: string }) => Promise<Row | null> {
  const sql = `SELECT ${Object.keys(select)
    .map((field) => `"${field}"`)
    .join(", ")} FROM "${table}" WHERE "orgId" = $1 AND "id" = $2 LIMIT 1`;
  return async (where) => (await prisma().$queryRawUnsafe<Row[]>(sql, where.orgId, where.id))[0] ?? null;
}

/**
 * A reader of one resource: `find` returns the organisation's row or null, `get` the record as the API returns it or
 * 404. Tenancy is structural: the organisation is in every `where`.
 * @param spec.noun the resource's name in messages ("Account").
 * @param spec.findFirst reads one row by a `where` (with the resource's `select` applied): {@link rowById} for a select
 * of plain columns.
 * @param spec.serialise the row as its GET returns it.
 */
export function resourceReader<Row, Out>(spec: {
  noun: string;
  findFirst: (where: { orgId: string; id: string }) => Promise<Row | null>;
  serialise: (row: Row) => Out;
}) {
  return {
    /** The organisation's row `id`, or null when it is missing or another organisation's. */
    find: (orgId: string, id: string): Promise<Row | null> => spec.findFirst({ orgId, id }),
    /**
     * The organisation's record `id` as its GET returns it.
     * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
     */
    async get(orgId: string, id: string): Promise<Out> {
      const row = await spec.findFirst({ orgId, id });
      if (!row) throw notFound(spec.noun, id);
      return spec.serialise(row);
    },
  };
}

/**
 * Locks the organisation's row `id` of `table` for update until the enclosing transaction ends, so two concurrent
 * updates of one record apply one after the other (and compare against what the first wrote).
 * @throws ApiError `not_found` (404) when it is missing or another organisation's.
 */
export async function lockForUpdate(table: string, noun: string, orgId: string, id: string): Promise<void> {
  // The table name comes from the calling service, never from a request.
  const rows = await prisma().$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM "${table}" WHERE "id" = $1 AND "orgId" = $2 FOR UPDATE`,
    id,
    orgId,
  );
  if (rows.length === 0) throw notFound(noun, id);
}

/**
 * Locks for the caller's transaction (`FOR UPDATE`, in id order against deadlocks) the rows of an organisation whose
 * `column` holds one of `values`, so that a bulk write can read them as they are before it changes them: the
 * `previous` values its events carry are then exact under concurrent writes.
 * @param columns the columns to return (quoted names); default only the id. One statement locks and reads.
 * @returns the locked rows.
 */
export async function lockRowsBy<Row = { id: string }>(
  table: string,
  orgId: string,
  column: string,
  values: readonly string[],
  columns: readonly string[] = ["id"],
): Promise<Row[]> {
  if (values.length === 0) return [];
  // Table and column names come from the calling service, never from a request.
  return prisma().$queryRawUnsafe<Row[]>(
    `SELECT ${columns.map((name) => `"${name}"`).join(", ")} FROM "${table}"
     WHERE "orgId" = $1 AND "${column}" = ANY($2::text[]) ORDER BY "id" FOR UPDATE`,
    orgId,
    values,
  );
}

/** Whether a write failed on a unique constraint (Prisma P2002), to answer 422 naming the field that clashed. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}

/** A JSON value compared by content: arrays and objects field by field. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * What an update changes (one update style for every resource): the fields of `wanted` that are given (not
 * undefined) and differ from `current`, both in the API's representation (timestamps as ISO strings, money as
 * numbers). A request whose result is empty changes nothing: the caller writes nothing, leaves `updatedAt` as it was
 * and records no event (the event's `changedFields` and `previous` come from the records before and after, see
 * `recordEvents`).
 * @returns `changes`: the new values, keyed by field.
 */
export function changedFields<T extends object>(current: T, wanted: Partial<T>): { changes: Partial<T> } {
  const changes: Partial<T> = {};
  for (const key of Object.keys(wanted) as Array<keyof T>) {
    const value = wanted[key];
    if (value === undefined || sameValue(current[key], value)) continue;
    changes[key] = value;
  }
  return { changes };
}

/** One reference a write makes: the table and id it names, and where in the request it was given. */
export interface Reference {
  table: ReferencedTable;
  id: string;
  path: string[];
}

/** The references found by {@link lockReferences}: for rows that belong to an account, that account's id. */
export type LockedReferences = Map<string, { accountId: string | null }>;

/**
 * Checks that every referenced record exists in the organisation and locks it (`FOR KEY SHARE`) until the enclosing
 * transaction ends, so a concurrent delete cannot remove it between the check and the write. One statement per table.
 * @returns the rows found, keyed `<table>:<id>`, with the `accountId` of deals and contracts.
 * @throws ApiError `validation_error` (422) with one detail per reference that names no record of the organisation
 *         ("no account with this id in the organisation").
 */
export async function lockReferences(orgId: string, refs: readonly Reference[]): Promise<LockedReferences> {
  const found: LockedReferences = new Map();
  const tables = [...new Set(refs.map((ref) => ref.table))];
  for (const table of tables) {
    const ids = [...new Set(refs.filter((ref) => ref.table === table).map((ref) => ref.id))];
    const columns = OWNED_BY_ACCOUNT.has(table) ? `"id", "accountId"` : `"id", NULL::text AS "accountId"`;
    // The table name comes from the fixed union above, never from the request.
    const rows = await prisma().$queryRawUnsafe<Array<{ id: string; accountId: string | null }>>(
      `SELECT ${columns} FROM "${table}" WHERE "orgId" = $1 AND "id" = ANY($2::text[]) ORDER BY "id" FOR KEY SHARE`,
      orgId,
      ids,
    );
    for (const row of rows) found.set(`${table}:${row.id}`, { accountId: row.accountId });
  }
  const details: ErrorDetail[] = refs
    .filter((ref) => !found.has(`${ref.table}:${ref.id}`))
    .map((ref) => ({ path: ref.path, message: `no ${NOUNS[ref.table]} with this id in the organisation` }));
  if (details.length > 0) {
    const message =
      details.length === 1
        ? `${details[0]?.path.join(".")} names no ${NOUNS[refs.find((ref) => !found.has(`${ref.table}:${ref.id}`))?.table ?? "Account"]} of the organisation`
        : "The request references records that do not exist in the organisation";
    throw new ApiError("validation_error", message, { details });
  }
  return found;
}
