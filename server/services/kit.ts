// What every resource shares, written once (docs/architecture.md, "Layers and the request pipeline"): the statements
// generated from a resource's descriptor (reading a record of the organisation or answering 404, locking it for an
// update, inserts, updates and bulk upserts), the changed-fields comparison behind every update, and the references a
// write locks so they cannot vanish before it commits. Keyset pages are pagination.ts. A resource file holds only
// what differs.
import { isDeepStrictEqual } from "node:util";
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

/** How an item's JSON value becomes a writable column's value in the generated SQL. */
export type ColumnType = "text" | "int" | "boolean" | "timestamp" | "date" | "money" | { enum: string };

/** A writable column: its type, and the SQL value an insert takes when the item leaves the field out. */
export interface Column {
  type: ColumnType;
  default?: string;
}

/**
 * What the kit needs to know about a resource (docs/architecture.md, "Layers and the request pipeline"): its table and
 * noun, what a read selects and how a row becomes the API's record, which columns writes set, and the column bulk
 * upserts match on. Every statement that reads or writes the resource's records is generated from it.
 */
export interface ResourceSpec<Row, Out> {
  /** The model's table; from the service, never from a request. */
  table: string;
  /** The resource's name in messages ("Account"). */
  noun: string;
  /**
   * Each field of `Row`: `true` for the column of that name, or a SQL expression over the record's row (named by the
   * argument) and `$1` (the organisation's id), such as a contact's account relationships.
   */
  select: { readonly [Field in keyof Row]: true | ((row: string) => string) };
  /** The row as its GET returns it. */
  serialise: (row: Row) => Out;
  /** The columns creates, updates and bulk upserts write, in insert order. */
  writable?: Readonly<Record<string, Column>>;
  /** The column bulk upserts match items on (unique with `orgId`), when the resource has one. */
  match?: string;
}

/** One item of a bulk upsert's answer: the record, whether it was created, and the record after a change. */
export interface UpsertOutcome<Out> {
  id: string;
  action: "created" | "updated";
  /** The record after the write when it was created or one of its values changed; absent for an unchanged one. */
  after?: Out;
}

const UTC = (text: string) => `${text}::timestamptz AT TIME ZONE 'UTC'`;

/** The SQL value of `field` in the JSON object `source`, cast to the column's type (null when absent). */
function castOf(type: ColumnType, source: string, field: string): string {
  const text = `(${source}->>'${field}')`;
  if (typeof type === "object") return `${text}::"${type.enum}"`;
  switch (type) {
    case "text":
      return text;
    case "int":
      return `${text}::int`;
    case "boolean":
      return `${text}::boolean`;
    case "timestamp":
      return UTC(text);
    case "date":
      return `${text}::date`;
    case "money":
      return `${text}::numeric(12, 2)`;
  }
}

/** A value that is given in `source`, else the row's current one: how writes leave out fields the item leaves out. */
function givenOr(spec: Column, source: string, field: string, current: string): string {
  return `CASE WHEN ${source} ? '${field}' THEN ${castOf(spec.type, source, field)} ELSE ${current}."${field}" END`;
}

/**
 * The kit's statements for one resource, generated once from its {@link ResourceSpec}: reads (one record, several,
 * locked), inserts and updates returning the record as a read selects it, and the bulk upsert on the match column.
 * Every statement names the organisation as `$1`, so tenancy is structural, and each is one SQL text per resource
 * (prepared once per connection). Rows come back as Prisma's raw queries return them (dates as `Date`, decimals as
 * `Prisma.Decimal`, enums as strings, JSON parsed).
 */
export function defineResource<Row extends { id: string }, Out>(spec: ResourceSpec<Row, Out>) {
  const table = `"${spec.table}"`;
  const selectOf = (row: string) =>
    Object.entries(spec.select as Record<string, true | ((row: string) => string)>)
      .map(([field, expression]) => (expression === true ? `${row}."${field}"` : `${expression(row)} AS "${field}"`))
      .join(", ");
  // Statements that join other rows call the record's row `t`.
  const select = selectOf("t");
  const writable = Object.entries(spec.writable ?? {});
  const names = writable.map(([field]) => `"${field}"`).join(", ");

  // The most frequent statement of the API (a GET of one record) reads the table by its own name.
  const readOne = `SELECT ${selectOf(table)} FROM ${table} WHERE "orgId" = $1 AND "id" = $2 LIMIT 1`;
  const lockOne = `SELECT ${select} FROM ${table} AS t WHERE t."orgId" = $1 AND t."id" = $2 FOR UPDATE OF t`;
  const readMany = `SELECT ${select} FROM ${table} AS t WHERE t."orgId" = $1 AND t."id" = ANY($2::text[])`;
  const lockMatched = `SELECT ${select} FROM ${table} AS t
     WHERE t."orgId" = $1 AND t."${spec.match}" = ANY($2::text[]) ORDER BY t."id" FOR UPDATE OF t`;
  const insertMany = `INSERT INTO ${table} AS t ("id", "orgId", ${names}, "createdAt", "updatedAt")
     SELECT e->>'id', $1, ${writable
       .map(([field, column]) =>
         column.default === undefined
           ? castOf(column.type, "e", field)
           : `COALESCE(${castOf(column.type, "e", field)}, ${column.default})`,
       )
       .join(", ")}, ${UTC("$3")}, ${UTC("$3")}
     FROM jsonb_array_elements($2::jsonb) AS e
     ${spec.match ? `ON CONFLICT ("orgId", "${spec.match}") DO NOTHING` : ""}
     RETURNING ${select}`;
  const updateOne = `UPDATE ${table} AS t SET
       ${writable.map(([field, column]) => `"${field}" = ${givenOr(column, "x.e", field, "t")}`).join(", ")},
       "updatedAt" = ${UTC("$4")}
     FROM (SELECT $3::jsonb AS e) AS x
     WHERE t."orgId" = $1 AND t."id" = $2
     RETURNING ${select}`;
  // The sub-select locks the matched rows in id order (against deadlocks between concurrent bulks) and compares each
  // with what it becomes, so updatedAt moves only for a row whose values change.
  const updateMatched = `UPDATE ${table} AS t SET
       ${writable.map(([field]) => `"${field}" = n."${field}"`).join(", ")},
       "updatedAt" = CASE WHEN n."changed" THEN ${UTC("$3")} ELSE t."updatedAt" END
     FROM (
       SELECT c."id", v.*,
              (${writable.map(([field]) => `c."${field}"`).join(", ")}) IS DISTINCT FROM (${writable
                .map(([field]) => `v."${field}"`)
                .join(", ")}) AS "changed"
       FROM jsonb_array_elements($2::jsonb) AS e
       JOIN ${table} AS c ON c."orgId" = $1 AND c."${spec.match}" = e->>'${spec.match}'
       CROSS JOIN LATERAL (
         SELECT ${writable.map(([field, column]) => `${givenOr(column, "e", field, "c")} AS "${field}"`).join(", ")}
       ) AS v
       ORDER BY c."id"
       FOR UPDATE OF c
     ) AS n
     WHERE t."id" = n."id"
     RETURNING ${select}, n."changed"`;

  const query = <T>(sql: string, ...values: unknown[]) => prisma().$queryRawUnsafe<T[]>(sql, ...values);
  const matchOf = (item: Readonly<Record<string, unknown>>) => {
    const value = spec.match ? item[spec.match] : undefined;
    return typeof value === "string" ? value : undefined;
  };

  const resource = {
    spec,
    /** The organisation's row `id`, or null when it is missing or another organisation's. One statement. */
    find: async (orgId: string, id: string): Promise<Row | null> => (await query<Row>(readOne, orgId, id))[0] ?? null,
    /**
     * The organisation's record `id` as its GET returns it.
     * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1.1).
     */
    async get(orgId: string, id: string): Promise<Out> {
      const row = await resource.find(orgId, id);
      if (!row) throw notFound(spec.noun, id);
      return spec.serialise(row);
    },
    /**
     * Locks the organisation's record `id` for update until the enclosing transaction ends and reads it, in one
     * statement, so two concurrent updates of one record apply one after the other (and compare against what the
     * first wrote).
     * @throws ApiError `not_found` (404) when missing or owned by another organisation.
     */
    async lock(orgId: string, id: string): Promise<Out> {
      const [row] = await query<Row>(lockOne, orgId, id);
      if (!row) throw notFound(spec.noun, id);
      return spec.serialise(row);
    },
    /** The organisation's records with these ids, by id; ids of no record of the organisation are absent. */
    async many(orgId: string, ids: readonly string[]): Promise<Map<string, Out>> {
      if (ids.length === 0) return new Map();
      const rows = await query<Row>(readMany, orgId, [...new Set(ids)]);
      return new Map(rows.map((row) => [row.id, spec.serialise(row)]));
    },
    /**
     * Inserts `items` (each with its new `id` and the writable fields it gives; the others take their defaults), with
     * `createdAt` and `updatedAt` = `now`. With a match column, an item whose match value the organisation already
     * has is skipped.
     * @returns the inserted rows, in no particular order.
     */
    insert: (
      orgId: string,
      items: ReadonlyArray<Readonly<Record<string, unknown>> & { id: string }>,
      now: Date | string,
    ): Promise<Row[]> => query<Row>(insertMany, orgId, JSON.stringify(items), new Date(now).toISOString()),
    /**
     * Sets the writable fields `changes` gives on the organisation's record `id` and moves `updatedAt` to `now`.
     * @returns the row after the update, or null when the record is missing or another organisation's.
     */
    update: async (orgId: string, id: string, changes: object, now: Date | string): Promise<Row | null> =>
      (await query<Row>(updateOne, orgId, id, JSON.stringify(changes), new Date(now).toISOString()))[0] ?? null,
    /**
     * Bulk upsert on the match column, in the caller's transaction, a fixed handful of statements whatever the size:
     * one locks and reads the records the items match (the `previous` values of the events are then exact under
     * concurrent writes), one `INSERT … ON CONFLICT DO NOTHING` creates the items whose match value is new (or absent),
     * one `UPDATE … FROM` applies the others, fields an item leaves out keeping their values and `updatedAt` moving only
     * for a record whose values change. A matched record deleted between the two statements is created on the next
     * pass; one inserted meanwhile is locked and read before its update. Three passes always suffice.
     * @param items each with its new `id` (used when it creates) and the writable fields it gives.
     * @returns per item in order its outcome, and the records before the write of those it updated, by id.
     */
    async upsert(
      orgId: string,
      items: ReadonlyArray<Readonly<Record<string, unknown>> & { id: string }>,
      now: Date | string,
    ): Promise<{ outcomes: Array<UpsertOutcome<Out>>; before: Map<string, Out> }> {
      const at = new Date(now).toISOString();
      const before = new Map<string, Out>();
      const known = new Set<string>();
      const lockAndRead = async (values: string[]) => {
        if (values.length === 0) return;
        for (const row of await query<Row>(lockMatched, orgId, values)) {
          before.set(row.id, spec.serialise(row));
          known.add(String((row as Record<string, unknown>)[spec.match ?? "id"]));
        }
      };
      await lockAndRead(items.flatMap((item) => matchOf(item) ?? []));
      const outcomes: Array<UpsertOutcome<Out> | undefined> = items.map(() => undefined);
      let pending = items.map((item, index) => ({ item, index }));
      for (let pass = 0; pass < 3 && pending.length > 0; pass++) {
        const inserted = new Map(
          (
            await resource.insert(
              orgId,
              pending.map((p) => p.item),
              at,
            )
          ).map((row) => [row.id, row]),
        );
        const conflicting = pending.filter((p) => {
          const row = inserted.get(p.item.id);
          if (row) outcomes[p.index] = { id: row.id, action: "created", after: spec.serialise(row) };
          return !row;
        });
        pending = [];
        if (conflicting.length === 0) break;
        await lockAndRead(conflicting.flatMap((p) => matchOf(p.item) ?? []).filter((value) => !known.has(value)));
        const updated = await query<Row & { changed: boolean }>(
          updateMatched,
          orgId,
          JSON.stringify(conflicting.map((p) => p.item)),
          at,
        );
        const byMatch = new Map(
          updated.map(({ changed, ...row }) => [
            String((row as Record<string, unknown>)[spec.match ?? "id"]),
            { row: row as unknown as Row, changed },
          ]),
        );
        for (const p of conflicting) {
          const found = byMatch.get(matchOf(p.item) ?? "");
          if (!found) pending.push(p);
          else
            outcomes[p.index] = {
              id: found.row.id,
              action: "updated",
              after: found.changed ? spec.serialise(found.row) : undefined,
            };
        }
      }
      if (pending.length > 0) throw new Error(`${spec.noun} bulk upsert did not settle after 3 passes`);
      return { outcomes: outcomes as Array<UpsertOutcome<Out>>, before };
    },
  };
  return resource;
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
 * Whether a write failed on a unique constraint, to answer 422 naming the field that clashed: Prisma's P2002 from a
 * model query, or the driver's unique violation (SQLSTATE 23505) from a raw statement of {@link defineResource}.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  const cause = (error.meta?.driverAdapterError as { cause?: { kind?: string } } | undefined)?.cause;
  return error.code === "P2002" || cause?.kind === "UniqueConstraintViolation";
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
    // Compared by structure: jsonb hands objects back with their keys reordered.
    if (value === undefined || isDeepStrictEqual(current[key], value)) continue;
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
