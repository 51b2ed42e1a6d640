// What every resource shares, written once (docs/architecture.md, "Layers and the request pipeline"): the statements
// generated from a resource's descriptor (reading a record of the organisation or answering 404, locking it for an
// update, inserts, updates and bulk upserts), the changed-fields comparison behind every update, and the references a
// write locks so they cannot vanish before it commits. Keyset pages are pagination.ts. A resource file holds only
// what differs.
import { isDeepStrictEqual } from "node:util";
import { Prisma } from "../db/generated/client";
import { prisma } from "../db/transaction";
import { ApiError, type ErrorDetail, notFound } from "../errors";
import type { CustomFieldResource, CustomFieldValues } from "./custom-fields/schema";
import { CUSTOM_FIELD_PARAM } from "./custom-fields/schema";
import {
  activeValuesSql,
  applyChange,
  archivedValuesOf,
  checkValues,
  customFieldConditions,
  customFieldFilterSql,
  customFilterSeeks,
  fieldsOf,
  insertedValuesSql,
  keyLiteral,
  mergedValuesSql,
  type ResourceFields,
  refuseIssues,
  sortOf,
  writtenIssues,
} from "./custom-fields/values";
import {
  type CustomFilterSql,
  filterConditions,
  filtersCustomFields,
  foldSql,
  groupConditions,
  type SearchTerm,
  type SqlParams,
  termSql,
} from "./filters";
import type { FilterTable } from "./filters.schema";
import {
  type ListQuery,
  parseSort,
  readListCursor,
  type SortableFields,
  type SortTerm,
  toPage,
  unknownCursor,
} from "./pagination";

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
 * How an item's JSON value becomes a writable column's value in the generated SQL; `customFields` is the values column
 * of a resource with custom fields, written from a {@link ValuesChange}-shaped item field.
 */
export type ColumnType =
  | "text"
  | "int"
  | "boolean"
  | "timestamp"
  | "date"
  | "money"
  | "customFields"
  | { enum: string };

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
  /**
   * The resource's name for custom fields, when its records have them (docs/architecture.md, "Custom fields"): reads
   * answer the active values as `customFields`, and creates, updates and bulk upserts check and merge the values their
   * items give against the organisation's fields.
   */
  customFields?: CustomFieldResource;
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
    case "customFields":
      return insertedValuesSql(source);
  }
}

/** A value that is given in `source`, else the row's current one: how writes leave out fields the item leaves out. */
function givenOr(spec: Column, source: string, field: string, current: string): string {
  if (spec.type === "customFields") return mergedValuesSql(source, current);
  return `CASE WHEN ${source} ? '${field}' THEN ${castOf(spec.type, source, field)} ELSE ${current}."${field}" END`;
}

/** A record with custom field values, as resources that have them serialise it. */
type WithValues = { customFields: CustomFieldValues };

/** Where a request's item `index` of `list` (or the body, without a list) keeps its custom field values. */
function valuesPath(list: string | undefined, index: number): string[] {
  return list ? [list, String(index), "customFields"] : ["customFields"];
}

/**
 * How a list of a resource reads its query (docs/api-contract.md §4.9): the public sort fields, the columns some of
 * them sort by (a contact's `email` sorts by its `emailKey`), the default order, the `field[op]` filters, and the
 * resource's own filters (`lifecycle=ACTIVE`) as filter terms on its columns or as SQL over the row `t`.
 */
export interface ListView {
  sortable: SortableFields;
  columns?: Readonly<Record<string, string>>;
  defaultSort: readonly SortTerm[];
  filters: FilterTable;
  terms?: readonly SearchTerm[];
  where?: (params: SqlParams) => string[];
  /**
   * The filter fields an index of the table leads with after `orgId`: a structured search group comparing one of them
   * is found through that index (docs/architecture.md, "Search").
   */
  indexed?: readonly string[];
}

/**
 * A list's own filter `field = value` (`lifecycle=ACTIVE` on `lifecycleStatus`) as a filter term, none when the value
 * is not given: `kind` "text" compares case-insensitively, anything else exactly.
 */
export function equalTo(field: string, value: unknown, kind: "text" | "id" = "id"): SearchTerm[] {
  return value === undefined ? [] : [{ field, op: "eq", kind, value }];
}

/** The parameters of one statement, `$2` on (`$1` is always the organisation). */
function paramsFrom(orgId: string): SqlParams & { values: unknown[] } {
  const values: unknown[] = [orgId];
  return {
    values,
    organisation: "$1",
    add(value) {
      values.push(value);
      return `$${values.length}`;
    },
  };
}

/**
 * Folds for `contains` (`SqlParams.fold`) shared by a list statement's filters: an expression read by one filter is
 * folded where it is read; one read by several (structured search's groups naming the same field) is folded once per
 * row in a lateral sub-select of its own (`OFFSET 0` keeps PostgreSQL from inlining it back into every filter), which
 * made five groups of `contains` on a 1,000-character value five times cheaper (docs/architecture.md, "Budgets: what
 * one request may cost"). Filters get a marker; `resolve` turns the statement's text and its FROM item into SQL.
 */
function sharedFolds() {
  const folds: Array<{ expression: string; uses: number }> = [];
  return {
    fold(expression: string): string {
      let index = folds.findIndex((fold) => fold.expression === expression);
      if (index < 0) index = folds.push({ expression, uses: 0 }) - 1;
      (folds[index] as { uses: number }).uses += 1;
      return `/*fold ${index}*/`;
    },
    /** `from` with the lateral sub-select when a fold is shared, and `sql` with every marker replaced. */
    resolve(from: string, sql: string): { from: string; sql: string } {
      const shared = folds.flatMap((fold, index) =>
        fold.uses > 1 ? [`${foldSql(fold.expression)} AS v${index}`] : [],
      );
      return {
        from: shared.length > 0 ? `${from} CROSS JOIN LATERAL (SELECT ${shared.join(", ")} OFFSET 0) AS folded` : from,
        sql: sql.replace(/\/\*fold (\d+)\*\//g, (_, index: string) => {
          const fold = folds[Number(index)] as { expression: string; uses: number };
          return fold.uses > 1 ? `folded.v${index}` : foldSql(fold.expression);
        }),
      };
    },
  };
}

/** The SQL type a compared value is cast to, by the column's type (keyset comparisons: values read back as text). */
function sortCast(type: ColumnType | "id"): string {
  if (typeof type === "object") return `"${type.enum}"`;
  const casts: Record<Exclude<ColumnType, object> | "id", string> = {
    id: "text",
    text: "text",
    // The column's own family, so an index on it serves the comparison (an int column compared with numeric is cast
    // to numeric for every row, which no index serves and the planner cannot estimate).
    int: "bigint",
    money: "numeric",
    boolean: "boolean",
    timestamp: "timestamp",
    date: "date",
    customFields: "jsonb",
  };
  return casts[type];
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
  const fieldsResource = spec.customFields;
  const reads: Record<string, true | ((row: string) => string)> = { ...spec.select };
  if (fieldsResource) reads.customFields = activeValuesSql(fieldsResource);
  const selectOf = (row: string) =>
    Object.entries(reads)
      .map(([field, expression]) => (expression === true ? `${row}."${field}"` : `${expression(row)} AS "${field}"`))
      .join(", ");
  // Statements that join other rows call the record's row `t`.
  const select = selectOf("t");
  const writable = Object.entries({
    ...spec.writable,
    ...(fieldsResource ? { customFields: { type: "customFields" } satisfies Column } : {}),
  });
  const names = writable.map(([field]) => `"${field}"`).join(", ");

  // The most frequent statement of the API (a GET of one record) reads the table by its own name.
  const readOne = `SELECT ${selectOf(table)} FROM ${table} WHERE "orgId" = $1 AND "id" = $2 LIMIT 1`;
  const lockOne = `SELECT ${select} FROM ${table} AS t WHERE t."orgId" = $1 AND t."id" = $2 FOR UPDATE OF t`;
  const readMany = `SELECT ${select} FROM ${table} AS t WHERE t."orgId" = $1 AND t."id" = ANY($2::text[])`;
  const lockMatched = `SELECT ${select} FROM ${table} AS t
     WHERE t."orgId" = $1 AND t."${spec.match}" = ANY($2::text[]) ORDER BY t."id" FOR UPDATE OF t`;
  const insertMany = `INSERT INTO ${table} AS t ("id", "orgId", ${names}, "createdAt", "updatedAt")
     SELECT e->>'id', $1, ${writable
       .map(([field, column]: [string, Column]) =>
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
  const columnTypes: Readonly<Record<string, ColumnType | "id">> = {
    id: "id",
    createdAt: "timestamp",
    updatedAt: "timestamp",
    ...Object.fromEntries(writable.map(([field, column]) => [field, column.type])),
  };

  /** A list's sort terms with what each sorts by (SQL over `t`): a column, or a custom field's expression. */
  function sortsOf(terms: readonly SortTerm[], view: ListView, sortable: SortableFields, fields?: ResourceFields) {
    const all =
      terms.at(-1)?.field === "id" ? [...terms] : [...terms, { field: "id", direction: terms[0]?.direction ?? "asc" }];
    return all.map((term) => {
      const key = term.field.startsWith("customFields.") ? term.field.slice("customFields.".length) : undefined;
      const field = key === undefined ? undefined : fields?.active.get(key);
      const custom = field && sortOf(field.type);
      if (key !== undefined && custom) {
        return {
          ...term,
          nullable: true,
          cast: custom.cast,
          expression: custom.expression(keyLiteral(key)),
        };
      }
      const column = view.columns?.[term.field] ?? term.field;
      return {
        ...term,
        nullable: sortable[term.field]?.nullable === true,
        cast: sortCast(columnTypes[column] ?? "text"),
        expression: `t."${column}"`,
      };
    });
  }
  const matchOf = (item: Readonly<Record<string, unknown>>) => {
    const value = spec.match ? item[spec.match] : undefined;
    return typeof value === "string" ? value : undefined;
  };
  type Item = Readonly<Record<string, unknown>> & { id: string };

  /**
   * The organisation's fields of this resource, and `items` with their `customFields` checked against them and turned
   * into the change the SQL applies: all of a create's values (`create`), or what an update or bulk item gives
   * (`patch`; an item without values keeps the record's).
   * @throws ApiError `validation_error` (422) with every item's issues (`<list>.<i>.customFields.<key>`).
   */
  async function withValues<T extends Item>(
    orgId: string,
    items: readonly T[],
    mode: "create" | "patch",
    list: string | undefined,
  ): Promise<{ fields?: ResourceFields; items: T[] }> {
    if (!fieldsResource) return { items: [...items] };
    const fields = (await fieldsOf(orgId)).of(fieldsResource);
    const issues: ErrorDetail[] = [];
    const checked = items.map((item, index) => {
      const given = item.customFields as Record<string, unknown> | undefined;
      if (mode === "patch" && given === undefined) return item;
      const path = valuesPath(list, index);
      const { change, issues: found } = checkValues(fields, given, mode, path);
      issues.push(...found);
      if (found.length === 0 && mode === "create") issues.push(...writtenIssues(fields, change.set, false, path));
      return { ...item, customFields: change };
    });
    refuseIssues(issues);
    return { fields, items: checked };
  }

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
     * has is skipped. Custom field values are checked first (every required field given, 16 KB at most).
     * @param list the request's list of items (`deals`), for the paths of refused values; none for a single create.
     * @returns the inserted rows, in no particular order.
     * @throws ApiError `validation_error` (422) for custom field values the organisation's fields refuse.
     */
    async insert(orgId: string, items: readonly Item[], now: Date | string, list?: string): Promise<Row[]> {
      const checked = await withValues(orgId, items, "create", list);
      return query<Row>(insertMany, orgId, JSON.stringify(checked.items), new Date(now).toISOString());
    },
    /**
     * What an update of `current` to the `wanted` fields changes ({@link changedFields}), with the custom field values
     * it gives checked and merged into the record's: `customFields` among the changes is then the record's values
     * after the update. The 16 KB of values count the archived fields' values the record still stores.
     * @throws ApiError `validation_error` (422) for custom field values the organisation's fields refuse (paths
     *         `customFields.<key>`, or `customFields` for their size).
     */
    async changes<Wanted extends object>(orgId: string, current: Out, wanted: Wanted): Promise<Partial<Wanted>> {
      const given = (wanted as { customFields?: Record<string, unknown> }).customFields;
      let target: object = wanted;
      if (fieldsResource && given !== undefined) {
        const fields = (await fieldsOf(orgId)).of(fieldsResource);
        const { change, issues } = checkValues(fields, given, "patch", ["customFields"]);
        refuseIssues(issues);
        const { id, customFields: before } = current as unknown as WithValues & { id: string };
        const values = applyChange(before, change);
        const archived = (await archivedValuesOf(fields, spec.table, orgId, [id])).get(id);
        refuseIssues(writtenIssues(fields, values, false, ["customFields"], { archived, before }));
        target = { ...wanted, customFields: values };
      }
      return changedFields(current as object, target as Partial<object>).changes as Partial<Wanted>;
    },
    /**
     * Sets the writable fields `changes` gives on the organisation's record `current` and moves `updatedAt` to `now`;
     * `customFields`, when given, is the record's values after the update (see `changes`), and the stored values of
     * archived fields stay for their purge.
     * @returns the row after the update, or null when the record is missing or another organisation's.
     */
    async update(
      orgId: string,
      current: Out & { id: string },
      changes: object,
      now: Date | string,
    ): Promise<Row | null> {
      const values = (changes as Partial<WithValues>).customFields;
      const data =
        values === undefined
          ? changes
          : {
              ...changes,
              customFields: { set: values, unset: Object.keys((current as unknown as WithValues).customFields) },
            };
      const rows = await query<Row>(updateOne, orgId, current.id, JSON.stringify(data), new Date(now).toISOString());
      return rows[0] ?? null;
    },
    /**
     * The statement of one keyset page of the organisation's records (docs/api-contract.md §4.9, §4.18), which
     * {@link list} runs: the view's own filters, the `field[op]` filters, structured search's filter groups, the custom
     * field filters and sort (docs/api-contract.md §4.9.5), `updatedAfter` (strictly later), and the records after the
     * cursor's in the order of `sort` plus `id` (null values of nullable fields last in both directions), `limit + 1`
     * rows to know whether more follow. Never OFFSET: a deep page costs what the first costs where an index serves the
     * order (docs/architecture.md, "Data and migrations"). Two or more filter groups that an index each finds become
     * one limited query per group, united (docs/architecture.md, "Search"): an OR of them in one condition made the
     * planner read every record of the organisation.
     * @returns the SQL text and its parameters (`$1` the organisation).
     * @throws ApiError `bad_request` (400) when `cursor` is neither a record id nor a list cursor, or names no record
     *         of the organisation; `validation_error` (422) for a custom field parameter or filter the organisation's
     *         fields refuse, or an invalid `sort` under strict handling (`parseSort`).
     */
    async listStatement(
      orgId: string,
      given: ListQuery & Readonly<Record<string | symbol, unknown>>,
      view: ListView,
    ): Promise<{ sql: string; values: unknown[] }> {
      const wantsFields =
        Object.keys(given).some((name) => CUSTOM_FIELD_PARAM.test(name)) ||
        (given.sort ?? "").includes("customFields.") ||
        filtersCustomFields(given);
      const fields = fieldsResource && wantsFields ? (await fieldsOf(orgId)).of(fieldsResource) : undefined;
      const sortable: SortableFields = { ...view.sortable };
      for (const [key, field] of fields?.active ?? []) {
        if (sortOf(field.type)) sortable[`customFields.${key}`] = { nullable: true };
      }
      const terms = parseSort(given.sort, sortable, view.defaultSort, fieldsResource !== undefined);
      const sorts = sortsOf(terms, view, sortable, fields);

      let cursor: Array<string | null> | undefined;
      if (given.cursor !== undefined) {
        const read = paramsFrom(orgId);
        const id = read.add(readListCursor(given.cursor));
        const values = sorts.map((sort, index) => `(${sort.expression})::text AS "k${index}"`).join(", ");
        const [row] = await query<Record<string, string | null>>(
          `SELECT ${values} FROM ${table} AS t WHERE t."orgId" = $1 AND t."id" = ${id}`,
          ...read.values,
        );
        if (!row) throw unknownCursor();
        cursor = sorts.map((_, index) => row[`k${index}`] ?? null);
      }

      const folds = sharedFolds();
      const params = { ...paramsFrom(orgId), fold: folds.fold };
      const where = [`t."orgId" = $1`];
      const columnOf = (field: string) => ({
        expression: `t."${field}"`,
        cast: sortCast(columnTypes[field] ?? "text"),
      });
      for (const term of view.terms ?? []) where.push(termSql(term, columnOf(term.field), params));
      const customFilter: CustomFilterSql | undefined =
        fields && ((term, at) => customFieldFilterSql(fields, term, params, at));
      where.push(...filterConditions(given, view.filters, columnOf, params));
      const groups = groupConditions(given, params, {
        columnOf,
        indexed: view.indexed,
        customFilter,
        customSeeks: fields && ((term) => customFilterSeeks(fields, term)),
      });
      // Two or more groups that an index each finds are one branch each (below); otherwise one condition, which
      // reads the organisation's rows once for all groups (a group no index finds reads them anyway).
      const branched = groups.length > 1 && groups.every((group) => group.seeks);
      if (groups.length > 0 && !branched) where.push(`(${groups.map((group) => group.sql).join(" OR ")})`);
      if (view.where) where.push(...view.where(params));
      if (fields) where.push(...customFieldConditions(fields, given, params));
      if (given.updatedAfter)
        where.push(`t."updatedAt" > (${params.add(given.updatedAfter)}::timestamptz AT TIME ZONE 'UTC')`);
      const expressions = sorts.map((sort) => sort.expression);
      if (cursor) {
        const branches: string[] = [];
        const equalities: string[] = [];
        sorts.forEach((sort, index) => {
          const expression = expressions[index] as string;
          const value = cursor[index] ?? null;
          if (value !== null) {
            const beyond = `${expression} ${sort.direction === "asc" ? ">" : "<"} ${params.add(value)}::${sort.cast}`;
            const next = sort.nullable ? `(${beyond} OR ${expression} IS NULL)` : beyond;
            branches.push([...equalities, next].join(" AND "));
          }
          // The last term's equality would compare nothing after it (and leave its parameter unused).
          if (index < sorts.length - 1) {
            equalities.push(
              value === null ? `${expression} IS NULL` : `${expression} = ${params.add(value)}::${sort.cast}`,
            );
          }
        });
        where.push(branches.length > 0 ? `(${branches.map((branch) => `(${branch})`).join(" OR ")})` : "false");
        // A redundant range on the leading column lets PostgreSQL start the index scan at the cursor.
        const [lead] = sorts;
        const leadValue = cursor[0];
        if (lead && !lead.nullable && leadValue !== null && leadValue !== undefined) {
          where.push(
            `${expressions[0]} ${lead.direction === "asc" ? ">=" : "<="} ${params.add(leadValue)}::${lead.cast}`,
          );
        }
      }
      const order = sorts
        .map(
          (sort, index) => `${expressions[index]} ${sort.direction.toUpperCase()}${sort.nullable ? " NULLS LAST" : ""}`,
        )
        .join(", ");
      const limit = params.add(given.limit + 1);
      if (!branched) {
        const statement = folds.resolve(`${table} AS t`, `WHERE ${where.join(" AND ")}`);
        return {
          sql: `SELECT ${select} FROM ${statement.from} ${statement.sql} ORDER BY ${order} LIMIT ${limit}`,
          values: params.values,
        };
      }
      // One index-ordered, limited query per group, each with the same keyset and tenancy; the page is the first
      // `limit + 1` of their union (each branch's first `limit + 1` hold the union's), read back by primary key.
      const branches = groups.map((group) => {
        const statement = folds.resolve(`${table} AS t`, `WHERE ${[...where, group.sql].join(" AND ")}`);
        return `(SELECT t."id" FROM ${statement.from} ${statement.sql} ORDER BY ${order} LIMIT ${limit})`;
      });
      return {
        sql: `SELECT ${select} FROM ${table} AS t
          WHERE t."orgId" = $1 AND t."id" IN (${branches.join(" UNION ALL ")})
          ORDER BY ${order} LIMIT ${limit}`,
        values: params.values,
      };
    },
    /**
     * One keyset page of the organisation's records (docs/api-contract.md §4.9, §4.18): runs {@link listStatement}.
     * @returns `{ data, hasMore, nextCursor }`.
     * `cursor` is a record id, or a signed cursor of the form lists answered before; `nextCursor` is the id of the
     * page's last record (docs/api-contract.md §4.9.1).
     * @throws ApiError `bad_request` (400) when `cursor` is neither or names no record of the organisation;
     *         `validation_error` (422) for a custom field parameter or filter the organisation's fields refuse, or an
     *         invalid `sort` under strict handling (`parseSort`).
     */
    async list(
      orgId: string,
      given: ListQuery & Readonly<Record<string | symbol, unknown>>,
      view: ListView,
    ): Promise<{ data: Out[]; hasMore: boolean; nextCursor: string | null }> {
      const statement = await resource.listStatement(orgId, given, view);
      const rows = await query<Row>(statement.sql, ...statement.values);
      const page = toPage(rows, given.limit);
      return { data: page.rows.map(spec.serialise), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
    /**
     * Bulk upsert on the match column, in the caller's transaction, a fixed handful of statements whatever the size:
     * one locks and reads the records the items match (the `previous` values of the events are then exact under
     * concurrent writes), one `INSERT … ON CONFLICT DO NOTHING` creates the items whose match value is new (or absent),
     * one `UPDATE … FROM` applies the others, fields an item leaves out keeping their values and `updatedAt` moving only
     * for a record whose values change. A matched record deleted between the two statements is created on the next
     * pass; one inserted meanwhile is locked and read before its update. Three passes always suffice. Custom field
     * values are checked before (types, options, keys) and after the write (a created record's required fields, 16 KB
     * of values), since only the write tells whether an item creates; a refusal rolls the transaction back.
     * @param given each with its new `id` (used when it creates) and the writable fields it gives.
     * @param list the request's list of items (`accounts`), for the paths of refused items.
     * @returns per item in order its outcome, and the records before the write of those it updated, by id.
     * @throws ApiError `validation_error` (422) naming `<list>.<i>.customFields…` of every refused item.
     */
    async upsert(
      orgId: string,
      given: readonly Item[],
      now: Date | string,
      list: string,
    ): Promise<{ outcomes: Array<UpsertOutcome<Out>>; before: Map<string, Out> }> {
      const { fields, items } = await withValues(orgId, given, "patch", list);
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
          (await query<Row>(insertMany, orgId, JSON.stringify(pending.map((p) => p.item)), at)).map((row) => [
            row.id,
            row,
          ]),
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
      if (fields) {
        // An item finds out whether it creates only when it is written: a created record needs its required fields.
        const written = outcomes.flatMap((outcome) => (outcome?.after ? [outcome.id] : []));
        const archived = await archivedValuesOf(fields, spec.table, orgId, written);
        refuseIssues(
          outcomes.flatMap((outcome, index) =>
            outcome?.after
              ? writtenIssues(
                  fields,
                  (outcome.after as unknown as WithValues).customFields,
                  outcome.action === "created",
                  valuesPath(list, index),
                  {
                    archived: archived.get(outcome.id),
                    before: (before.get(outcome.id) as unknown as WithValues | undefined)?.customFields,
                  },
                )
              : [],
          ),
        );
      }
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
