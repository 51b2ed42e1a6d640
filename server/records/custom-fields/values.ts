// Custom fields, one module for every resource that has them (docs/architecture.md, "Custom fields"): an
// organisation's definitions as a cached field set, the zod schemas that validate values against them, the SQL that
// reads, merges, filters and sorts the values of a resource table's `customFields` column, and the JSON Schema of a
// resource's values. Resources opt in through their kit descriptor (`customFields` in `defineResource`); the
// definitions' own endpoints are custom-field-definitions.ts.
import { z } from "zod";
import { DateSchema, DateTimeInputSchema, issuesToDetails } from "../../contract/common";
import { prisma } from "../../db/transaction";
import { ApiError, type ErrorDetail } from "../../errors";
import { containsSql, equalsTextSql, type SqlParams } from "../filters";
import { CONTAINS_TOO_LONG, FILTER_LIMITS } from "../filters.schema";
import {
  CUSTOM_FIELD_KEY,
  CUSTOM_FIELD_LIMITS,
  CUSTOM_FIELD_PARAM,
  type CustomField,
  type CustomFieldJsonSchema,
  type CustomFieldResource,
  type CustomFieldType,
  type CustomFieldValues,
  OPTION_TYPES,
} from "./schema";

/** A JSON value as records store them. */
type Json = CustomFieldValues[string];

/** A definition as stored (the `CustomField` row). */
export type DefinitionRow = {
  id: string;
  resource: CustomFieldResource;
  key: string;
  label: string;
  type: CustomFieldType;
  description: string | null;
  options: unknown;
  required: boolean;
  searchable: boolean;
  createdAt: Date;
  updatedAt: Date;
  archivedAt: Date | null;
};

/** One option as stored in `CustomField.options`. */
export type StoredOption = {
  value: string;
  label: string;
  archivedAt: string | null;
};

/** A definition as the API returns it (docs/api-contract.md §2.13). */
export function toCustomField(row: DefinitionRow): CustomField {
  return {
    id: row.id,
    resource: row.resource,
    key: row.key,
    label: row.label,
    type: row.type,
    description: row.description,
    options: OPTION_TYPES.has(row.type) ? ((row.options as StoredOption[] | null) ?? []) : null,
    required: row.required,
    searchable: row.searchable,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    archivedAt: row.archivedAt?.toISOString() ?? null,
  };
}

/** The changes a write makes to a record's values: keys to set, keys to remove. */
export interface ValuesChange {
  set: Record<string, Json>;
  unset: string[];
}

/** The fields of one resource of an organisation, with the validators built from them. */
export interface ResourceFields {
  resource: CustomFieldResource;
  /** Active fields by key, in creation order. */
  active: ReadonlyMap<string, CustomField>;
  /** Keys of archived fields whose values are not purged yet. */
  archived: ReadonlySet<string>;
  /** The schema of each active field's value on a write, by key. */
  values: ReadonlyMap<string, z.ZodType<Json>>;
}

/** An organisation's custom fields at one version of its definitions. */
export interface FieldSet {
  version: number;
  of(resource: CustomFieldResource): ResourceFields;
}

const NUMBER = z.number().min(-CUSTOM_FIELD_LIMITS.number).max(CUSTOM_FIELD_LIMITS.number);
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** The schema of one field's value, as its type and (for picks) its options allow on a write. */
function valueSchema(field: CustomField): z.ZodType<Json> {
  const options = field.options ?? [];
  const active = new Set(options.filter((option) => option.archivedAt === null).map((option) => option.value));
  const pick = (value: string, ctx: z.core.$RefinementCtx<unknown>, path: PropertyKey[] = []) => {
    if (active.has(value)) return;
    const archived = options.some((option) => option.value === value);
    ctx.addIssue({
      code: "custom",
      path,
      message: archived
        ? `option ${value} is archived: it can no longer be picked`
        : `is not an option of ${field.key} (${[...active].slice(0, 20).join(", ")})`,
    });
  };
  switch (field.type) {
    case "text":
      return z.string().trim().min(1).max(CUSTOM_FIELD_LIMITS.text);
    case "number":
      return NUMBER;
    case "boolean":
      return z.boolean();
    case "date":
      return DateSchema;
    case "datetime":
      // Stored in UTC with milliseconds, as the API writes every timestamp: years 0001 to 9999, so the text is fixed
      // width and its byte order is time order.
      return DateTimeInputSchema.transform((value) => new Date(value).toISOString());
    case "select":
      return z.string().superRefine((value, ctx) => pick(value, ctx));
    case "multiSelect":
      return z
        .array(z.string())
        .max(CUSTOM_FIELD_LIMITS.picks)
        .superRefine((values, ctx) => {
          const seen = new Set<string>();
          values.forEach((value, index) => {
            if (seen.has(value)) ctx.addIssue({ code: "custom", path: [index], message: `repeats ${value}` });
            seen.add(value);
            pick(value, ctx, [index]);
          });
        });
    case "url":
      return z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).max(2_048);
    case "email":
      return z.email().max(254);
    case "currency":
      return z.strictObject({
        amount: NUMBER,
        currency: z.string().refine((code) => CURRENCIES.has(code), "must be an ISO 4217 currency code such as EUR"),
      });
  }
}

function resourceFields(resource: CustomFieldResource, definitions: readonly CustomField[]): ResourceFields {
  const active = new Map<string, CustomField>();
  const archived = new Set<string>();
  const values = new Map<string, z.ZodType<Json>>();
  for (const field of definitions) {
    if (field.resource !== resource) continue;
    if (field.archivedAt === null) {
      active.set(field.key, field);
      values.set(field.key, valueSchema(field));
    } else archived.add(field.key);
  }
  return { resource, active, archived, values };
}

/** A field set from the organisation's definitions (active and archived, oldest first). */
export function fieldSetOf(version: number, definitions: readonly CustomField[]): FieldSet {
  const byResource = new Map<CustomFieldResource, ResourceFields>();
  return {
    version,
    of(resource) {
      let fields = byResource.get(resource);
      if (!fields) {
        fields = resourceFields(resource, definitions);
        byResource.set(resource, fields);
      }
      return fields;
    },
  };
}

/** Organisations whose field sets one process keeps; the least recently used goes first beyond it. */
const CACHED_ORGANISATIONS = 1_000;
// One cache per process: Next.js may instantiate this module in more than one bundle.
const holder = globalThis as unknown as { __crmFieldSets?: Map<string, FieldSet> };
holder.__crmFieldSets ??= new Map();
const cache = holder.__crmFieldSets;
const EMPTY = fieldSetOf(0, []);

/**
 * The organisation's custom fields, with their validators: from this process's cache when it holds the version the
 * database has now, else read and built again (docs/architecture.md, "Custom fields"). Every call reads the version
 * (one primary-key lookup, inside the caller's transaction when there is one), so a definition changed on any
 * instance applies to the next write everywhere. An organisation that never defined a field costs only that lookup.
 */
export async function fieldsOf(orgId: string): Promise<FieldSet> {
  const [row] = await prisma().$queryRaw<Array<{ version: number }>>`
    SELECT "version" FROM "CustomFieldVersion" WHERE "orgId" = ${orgId}`;
  const version = row?.version ?? 0;
  if (version === 0) return EMPTY;
  const cached = cache.get(orgId);
  if (cached?.version === version) {
    cache.delete(orgId);
    cache.set(orgId, cached);
    return cached;
  }
  const rows = await prisma().customField.findMany({
    where: { orgId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const fields = fieldSetOf(version, rows.map(toCustomField));
  cache.delete(orgId);
  cache.set(orgId, fields);
  if (cache.size > CACHED_ORGANISATIONS) cache.delete(cache.keys().next().value as string);
  return fields;
}

/**
 * Moves the organisation's definitions version on (inside the caller's transaction) and holds the row lock of its
 * counter to the commit, so definition changes of one organisation apply one after the other (the limit of active
 * fields is counted exactly).
 */
export async function bumpFieldsVersion(orgId: string): Promise<void> {
  await prisma().$executeRaw`
    INSERT INTO "CustomFieldVersion" ("orgId", "version") VALUES (${orgId}, 1)
    ON CONFLICT ("orgId") DO UPDATE SET "version" = "CustomFieldVersion"."version" + 1`;
}

function refused(details: ErrorDetail[]): ApiError {
  const first = details[0];
  const message =
    details.length === 1 && first
      ? `${first.path.join(".")} ${first.message}`
      : "Custom field values do not match the organisation's custom fields";
  return new ApiError("validation_error", message, { details });
}

/**
 * Validates the `customFields` of one create (`mode` create) or update or bulk item (`patch`) against the resource's
 * fields (docs/api-contract.md §2.13). Only the keys the input has as its own are read, and the change is built in
 * null-prototype objects: a key that names a member of `Object.prototype` (`constructor`, defined before such keys
 * were refused) is a value like any other, and a field, archived or not, that the input does not name never refuses a
 * write (docs/architecture.md, "Custom fields").
 * @param prefix where the values sit in the request, for the details (`["customFields"]`,
 *        `["accounts", "3", "customFields"]`).
 * @returns the change to apply, or the issues found (paths `<prefix>.<key>`).
 */
export function checkValues(
  fields: ResourceFields,
  input: Readonly<Record<string, unknown>> | undefined,
  mode: "create" | "patch",
  prefix: readonly string[],
): { change: ValuesChange; issues: ErrorDetail[] } {
  const given = input ?? {};
  const set: Record<string, Json> = Object.create(null);
  const unset: string[] = [];
  const issues: ErrorDetail[] = [];
  for (const key of Object.keys(given)) {
    const value = given[key];
    const path = [...prefix, key];
    const schema = fields.values.get(key);
    const field = fields.active.get(key);
    if (!schema || !field) {
      const message = fields.archived.has(key)
        ? `the custom field ${key} is archived: writes cannot set it`
        : `no custom field of ${fields.resource}s has this key (GET /custom-fields)`;
      issues.push({ path, message });
    } else if (value === null) {
      if (field.required)
        issues.push({
          path,
          message: mode === "create" ? "is required: give it a value" : "is required: it cannot be cleared",
        });
      else unset.push(key);
    } else if (value !== undefined) {
      const parsed = schema.safeParse(value);
      if (parsed.success) set[key] = parsed.data;
      else issues.push(...issuesToDetails(parsed.error.issues, path));
    }
  }
  if (mode === "create") {
    for (const [key, field] of fields.active) {
      if (field.required && (!Object.hasOwn(given, key) || given[key] === undefined))
        issues.push({ path: [...prefix, key], message: "is required: give it a value" });
    }
  }
  return issues.length > 0
    ? { change: { set: Object.create(null), unset: [] }, issues }
    : { change: { set, unset }, issues };
}

/**
 * The values a record has after `change`: its `current` values with the keys set and cleared. A plain object, as
 * records' values are everywhere (events compare them by structure, prototypes included); only own keys are copied.
 */
export function applyChange(current: Readonly<Record<string, Json>>, change: ValuesChange): Record<string, Json> {
  const next: Record<string, Json> = { ...current, ...change.set };
  for (const key of change.unset) delete next[key];
  return next;
}

/**
 * The issues of records written with their values (a bulk item finds out whether it creates only when it is
 * written): a required field missing from a created record, and more than 16,384 bytes of values as JSON (UTF-8)
 * stored on the record, the values of archived fields that wait for their purge included (docs/api-contract.md
 * §2.13, §8.1). A write that does not add bytes to the record is never refused for its size, so a record over the
 * limit (archived values, or values stored before the limit) can still be changed and emptied.
 * @param values the record's active values after the write.
 * @param stored the values of archived fields the record holds, and its active values before the write (none for a
 *        created record).
 * @param prefix where each record's values sit in the request, for the details.
 */
export function writtenIssues(
  fields: ResourceFields,
  values: Readonly<Record<string, Json>>,
  created: boolean,
  prefix: readonly string[],
  stored: { archived?: Readonly<Record<string, Json>>; before?: Readonly<Record<string, Json>> } = {},
): ErrorDetail[] {
  const issues: ErrorDetail[] = [];
  if (created) {
    for (const [key, field] of fields.active) {
      if (field.required && !Object.hasOwn(values, key))
        issues.push({ path: [...prefix, key], message: "is required: give it a value" });
    }
  }
  const archived = stored.archived ?? {};
  const bytesOf = (active: Readonly<Record<string, Json>>) =>
    Buffer.byteLength(JSON.stringify({ ...archived, ...active }));
  const bytes = bytesOf(values);
  if (bytes > CUSTOM_FIELD_LIMITS.recordBytes && bytes > bytesOf(stored.before ?? {})) {
    const kept =
      Object.keys(archived).length > 0
        ? `, ${Buffer.byteLength(JSON.stringify(archived))} of them of archived fields awaiting their purge`
        : "";
    issues.push({
      path: [...prefix],
      message: `holds ${bytes} bytes of values${kept}; a record holds at most ${CUSTOM_FIELD_LIMITS.recordBytes} bytes of custom field values (docs/api-contract.md §8.1)`,
    });
  }
  return issues;
}

/**
 * The values of archived fields (awaiting their purge) that each of the organisation's records `ids` of `table`
 * holds, by record id: what reads leave out but the record's 16 KB still counts ({@link writtenIssues}). No query when
 * the resource has no archived field.
 * @param table the resource's table, from its kit descriptor (never from a request).
 */
export async function archivedValuesOf(
  fields: ResourceFields,
  table: string,
  orgId: string,
  ids: readonly string[],
): Promise<Map<string, Record<string, Json>>> {
  const found = new Map<string, Record<string, Json>>();
  if (fields.archived.size === 0 || ids.length === 0) return found;
  const rows = await prisma().$queryRawUnsafe<Array<{ id: string; values: Record<string, Json> | null }>>(
    `SELECT "id", jsonb_object_agg(v.key, v.value) FILTER (WHERE v.key IS NOT NULL) AS "values"
     FROM "${table}" AS t LEFT JOIN LATERAL jsonb_each(t."customFields") AS v ON v.key = ANY($3::text[])
     WHERE t."orgId" = $1 AND t."id" = ANY($2::text[]) GROUP BY t."id"`,
    orgId,
    [...ids],
    [...fields.archived],
  );
  for (const row of rows) found.set(row.id, row.values ?? {});
  return found;
}

/**
 * Throws every issue found, in one answer.
 * @throws ApiError `validation_error` (422) with the issues as details, when there are any.
 */
export function refuseIssues(issues: readonly ErrorDetail[]): void {
  if (issues.length > 0) throw refused([...issues]);
}

/**
 * The SQL of a record's values as reads answer them: the stored ones without the keys of archived fields (whose values
 * wait for their purge). The archived keys are one sub-select on the organisation (`$1`) per statement, not per row.
 */
export function activeValuesSql(resource: CustomFieldResource): (row: string) => string {
  return (row) =>
    `(${row}."customFields" - COALESCE((SELECT array_agg(f."key") FROM "CustomField" AS f
       WHERE f."orgId" = $1 AND f."resource" = '${resource}' AND f."archivedAt" IS NOT NULL), '{}'::text[]))`;
}

/** The SQL of a created record's values, from an item `source` carrying `customFields: ValuesChange`. */
export function insertedValuesSql(source: string): string {
  return `COALESCE(${source}->'customFields'->'set', '{}'::jsonb)`;
}

/**
 * The SQL of an updated record's values: its `current` stored values without the change's `unset` keys, with its
 * `set` values; the values of archived fields are kept for their purge. Unchanged when the item gives none.
 */
export function mergedValuesSql(source: string, current: string): string {
  return `CASE WHEN ${source} ? 'customFields'
    THEN (${current}."customFields" - ARRAY(SELECT jsonb_array_elements_text(${source}->'customFields'->'unset')))
         || COALESCE(${source}->'customFields'->'set', '{}'::jsonb)
    ELSE ${current}."customFields" END`;
}

/**
 * A field's key as a SQL literal. Keys match `^[a-z][a-z0-9_]{0,39}$` (checked here again), so the literal is safe; a
 * literal, not a parameter, so that the expression is one an index on it could serve (docs/architecture.md, "Custom
 * fields").
 */
export function keyLiteral(key: string): string {
  if (!CUSTOM_FIELD_KEY.test(key)) throw new Error(`not a custom field key: ${key}`);
  return `'${key}'`;
}

/** A list's term over a custom field: the SQL it sorts and compares by, and the type of a value compared with it. */
export interface CustomSort {
  /** SQL over the record's row `t`, given the key as a SQL literal ({@link keyLiteral}). */
  expression: (key: string) => string;
  /** How a compared value (text) is cast. */
  cast: string;
}

/**
 * How each type sorts: numbers, amounts and booleans as JSON (numbers compare as numbers), dates and datetimes as their
 * fixed-width text in byte order (their text order is time order), text by the database's collation like the
 * resources' own text fields. multiSelect values do not sort.
 */
const SORTS: Partial<Record<CustomFieldType, CustomSort>> = {
  number: { expression: (key) => `(t."customFields" -> ${key})`, cast: "jsonb" },
  currency: { expression: (key) => `(t."customFields" -> ${key} -> 'amount')`, cast: "jsonb" },
  boolean: { expression: (key) => `(t."customFields" -> ${key})`, cast: "jsonb" },
  date: { expression: (key) => `((t."customFields" ->> ${key}) COLLATE "C")`, cast: "text" },
  datetime: { expression: (key) => `((t."customFields" ->> ${key}) COLLATE "C")`, cast: "text" },
  text: { expression: (key) => `(t."customFields" ->> ${key})`, cast: "text" },
  url: { expression: (key) => `(t."customFields" ->> ${key})`, cast: "text" },
  email: { expression: (key) => `(t."customFields" ->> ${key})`, cast: "text" },
  select: { expression: (key) => `(t."customFields" ->> ${key})`, cast: "text" },
};

/** The sort of a field's type, or undefined when its values do not sort (multiSelect). */
export function sortOf(type: CustomFieldType): CustomSort | undefined {
  return SORTS[type];
}

type Operator = "eq" | "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "contains";

/** The operators of each type in `customFields.<key>[op]` (docs/api-contract.md §4.9.5). */
export const CUSTOM_FIELD_OPERATORS: Record<CustomFieldType, readonly Operator[]> = {
  text: ["eq", "ne", "in", "contains"],
  url: ["eq", "ne", "in", "contains"],
  email: ["eq", "ne", "in", "contains"],
  number: ["eq", "ne", "gt", "gte", "lt", "lte", "in"],
  currency: ["eq", "ne", "gt", "gte", "lt", "lte"],
  boolean: ["eq"],
  date: ["eq", "ne", "gt", "gte", "lt", "lte", "in"],
  datetime: ["gt", "gte", "lt", "lte"],
  select: ["eq", "ne", "in"],
  multiSelect: ["eq", "ne", "in"],
};

const TEXT_TYPES: ReadonlySet<CustomFieldType> = new Set(["text", "url", "email"]);
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The value of one `customFields.<key>[op]` parameter as the field's type reads it, or a reason it cannot be read. */
function readValue(field: CustomField, text: string): { value: Json } | { error: string } {
  switch (field.type) {
    case "number":
    case "currency": {
      const number = Number(text);
      return NUMBER_TEXT.test(text) && Math.abs(number) <= CUSTOM_FIELD_LIMITS.number
        ? { value: number }
        : { error: "must be a number" };
    }
    case "boolean":
      return text === "true" || text === "false" ? { value: text === "true" } : { error: "must be true or false" };
    case "date": {
      const date = DateSchema.safeParse(text);
      return date.success ? { value: text } : { error: `must be a date YYYY-MM-DD: ${date.error.issues[0]?.message}` };
    }
    case "datetime": {
      const time = DateTimeInputSchema.safeParse(text);
      return time.success
        ? { value: new Date(text).toISOString() }
        : { error: `must be an ISO 8601 timestamp with a time zone: ${time.error.issues[0]?.message}` };
    }
    case "select":
    case "multiSelect":
      return (field.options ?? []).some((option) => option.value === text)
        ? { value: text }
        : { error: `is not an option of ${field.key}` };
    default:
      return text.length >= 1 && text.length <= CUSTOM_FIELD_LIMITS.text
        ? { value: text }
        : { error: `must be 1 to ${CUSTOM_FIELD_LIMITS.text} characters` };
  }
}

/** `{key: value}` (`{key: {amount}}` for an amount, `{key: [value]}` for a pick of a multiSelect) as jsonb. */
function containing(field: CustomField, value: Json): string {
  const inner = field.type === "currency" ? { amount: value } : field.type === "multiSelect" ? [value] : value;
  return JSON.stringify({ [field.key]: inner });
}

/**
 * The SQL condition "the field equals one of `values`": containment of `{"<orgId>": {key: value}}` in
 * `custom_fields_of("orgId", "customFields")`, which the table's GIN index serves with the organisation's entries
 * alone (migration 20261129170000_custom_fields_index_by_organisation; docs/architecture.md, "Custom fields"); text
 * case-insensitively (the value folded once per row, whatever the number of values).
 * @throws Error when `params` names no organisation placeholder (a statement not built for one organisation).
 */
function equals(field: CustomField, values: readonly Json[], params: SqlParams, key: () => string): string {
  if (TEXT_TYPES.has(field.type)) return equalsTextSql(`(t."customFields" ->> ${key()})`, values.map(String), params);
  const organisation = params.organisation;
  if (!organisation) throw new Error("a custom field equality needs the organisation's placeholder");
  const one = (value: Json) =>
    `"custom_fields_of"(t."orgId", t."customFields") @> jsonb_build_object(${organisation}::text, ${params.add(containing(field, value))}::jsonb)`;
  return values.length === 1 ? one(values[0] as Json) : `(${values.map(one).join(" OR ")})`;
}

/** Why `fieldKey` names no field a filter may use: archived, or never defined for the resource. */
function noSuchField(fields: ResourceFields, fieldKey: string): string {
  return fields.archived.has(fieldKey)
    ? `the custom field ${fieldKey} is archived`
    : `no custom field of ${fields.resource}s has the key ${fieldKey}`;
}

/**
 * The SQL condition of one custom field filter: the field of `fieldKey` compared by `op` with the values `texts` (one,
 * or 1 to 50 for `in`) as a list's query parameter gives them, or why it is refused. Equality is containment, which
 * the table's GIN index (`jsonb_path_ops`) serves; ranges compare the type's sort expression; text compares
 * case-insensitively and literally, and `contains` takes 1 to 100 characters; `ne` does not match records without a
 * value.
 */
function conditionOf(
  fields: ResourceFields,
  fieldKey: string,
  op: string,
  texts: readonly string[],
  params: SqlParams,
): { sql: string } | { error: string; place: "field" | "operator" | "value" } {
  const field = fields.active.get(fieldKey);
  if (!field) {
    return { place: "field", error: noSuchField(fields, fieldKey) };
  }
  const operator = op as Operator;
  if (!CUSTOM_FIELD_OPERATORS[field.type].includes(operator)) {
    return {
      place: "operator",
      error: `a ${field.type} field takes ${CUSTOM_FIELD_OPERATORS[field.type].join(", ")}, not ${op}`,
    };
  }
  if (texts.length > FILTER_LIMITS.inValues)
    return { place: "value", error: `takes at most ${FILTER_LIMITS.inValues} values (docs/api-contract.md §8.1)` };
  if (operator === "contains" && texts.some((text) => text.length < 1 || text.length > FILTER_LIMITS.containsLength))
    return { place: "value", error: CONTAINS_TOO_LONG };
  const values: Json[] = [];
  for (const text of texts) {
    const read = readValue(field, text);
    if ("error" in read) return { place: "value", error: read.error };
    values.push(read.value);
  }
  const key = () => keyLiteral(field.key);
  const [value] = values as [Json];
  const hasValue = () => `(t."customFields" -> ${key()}) IS NOT NULL`;
  switch (operator) {
    case "eq":
      return { sql: equals(field, [value], params, key) };
    case "ne":
      return { sql: `(${hasValue()} AND NOT (${equals(field, [value], params, key)}))` };
    case "in":
      return { sql: equals(field, values, params, key) };
    case "contains":
      return { sql: containsSql(`(t."customFields" ->> ${key()})`, String(value), params) };
    default: {
      const sort = sortOf(field.type) as CustomSort;
      const symbol = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[operator];
      const compared = sort.cast === "jsonb" ? JSON.stringify(value) : String(value);
      return { sql: `${sort.expression(key())} ${symbol} ${params.add(compared)}::${sort.cast}` };
    }
  }
}

/**
 * The SQL conditions of the custom field parameters of a list query (`customFields.<key>=v`,
 * `customFields.<key>[op]=v`; docs/api-contract.md §4.9.5), as {@link conditionOf} makes them; `in` takes 1 to 50
 * comma-separated values.
 * @throws ApiError `validation_error` (422) naming each parameter whose key is no active field of the resource, whose
 *         operator the field's type has not, or whose value the type cannot read.
 */
export function customFieldConditions(
  fields: ResourceFields,
  query: Readonly<Record<string, unknown>>,
  params: SqlParams,
): string[] {
  const conditions: string[] = [];
  const issues: ErrorDetail[] = [];
  for (const [name, raw] of Object.entries(query)) {
    const match = CUSTOM_FIELD_PARAM.exec(name);
    if (!match || raw === undefined) continue;
    const [, fieldKey = "", op = "eq"] = match;
    const texts = op === "in" ? String(raw).split(",") : [String(raw)];
    const condition = conditionOf(fields, fieldKey, op, texts, params);
    if ("error" in condition) issues.push({ path: [name], message: condition.error });
    else conditions.push(condition.sql);
  }
  if (issues.length > 0) throw refused(issues);
  return conditions;
}

/**
 * The SQL condition of a structured search filter on `customFields.<key>` (docs/api-contract.md §4.18): the operators
 * the list's parameters take for the field's type, plus `exists` and `notExists` (the record has a value for it, or
 * none) for every type and `between` (inclusive `[low, high]`) for the types that take `gte` and `lte`. Values are
 * JSON: a number, a boolean or a text (a date, a time, an option value) as the field's type reads it; an array for
 * `in`.
 * @param at where the filter is in the body (`filterGroups.<g>.filters.<f>`), which a refusal names.
 * @throws ApiError `validation_error` (422) naming `<at>.field` for a key that is no active field of the resource,
 *         `<at>.operator` for an operator its type has not, `<at>.value` for a value the type cannot read.
 */
export function customFieldFilterSql(
  fields: ResourceFields,
  filter: { field: string; op: string; value: unknown },
  params: SqlParams,
  at: readonly (string | number)[],
): string {
  const fieldKey = filter.field.slice("customFields.".length);
  const field = fields.active.get(fieldKey);
  const fail = (place: string, message: string) => refused([{ path: [...at.map(String), place], message }]);
  if (!field) throw fail("field", noSuchField(fields, fieldKey));
  const key = keyLiteral(field.key);
  if (filter.op === "exists") return `(t."customFields" -> ${key}) IS NOT NULL`;
  if (filter.op === "notExists") return `(t."customFields" -> ${key}) IS NULL`;
  const text = (one: unknown) => (typeof one === "string" ? one : JSON.stringify(one));
  const run = (op: string, texts: readonly string[]) => {
    const condition = conditionOf(fields, fieldKey, op, texts, params);
    if ("sql" in condition) return condition.sql;
    throw fail(condition.place, condition.error);
  };
  if (filter.op === "between") {
    if (!CUSTOM_FIELD_OPERATORS[field.type].includes("gte")) {
      throw fail(
        "operator",
        `a ${field.type} field takes ${CUSTOM_FIELD_OPERATORS[field.type].join(", ")}, exists and notExists, not between`,
      );
    }
    const [low, high] = filter.value as [unknown, unknown];
    const sql = `(${run("gte", [text(low)])} AND ${run("lte", [text(high)])})`;
    // Both read (run would have thrown otherwise): numbers compare as numbers, dates and UTC times as their text.
    const [from, to] = [readValue(field, text(low)), readValue(field, text(high))].map((read) =>
      "value" in read ? read.value : null,
    );
    const after = typeof from === "number" && typeof to === "number" ? from > to : String(from) > String(to);
    if (after) throw fail("value", "must be [low, high] with low at most high");
    return sql;
  }
  return run(filter.op, filter.op === "in" ? (filter.value as unknown[]).map(text) : [text(filter.value)]);
}

/**
 * Whether the table's GIN index of custom field values (`jsonb_path_ops`) serves a structured search filter on
 * `customFields.<key>` (docs/architecture.md, "Search"): `eq` and `in` of a field compared by containment (not text,
 * which compares folded); false for a key that names no active field (its filter is refused anyway).
 */
export function customFilterSeeks(fields: ResourceFields, filter: { field: string; op: string }): boolean {
  const field = fields.active.get(filter.field.slice("customFields.".length));
  return field !== undefined && !TEXT_TYPES.has(field.type) && (filter.op === "eq" || filter.op === "in");
}

/**
 * The JSON Schema (2020-12) of one resource's `customFields` in the organisation (docs/api-contract.md §2.13): one
 * optional property per active field, typed as its values are (select and multiSelect enumerate every option value a
 * record may carry, archived ones included), no other keys.
 */
export function jsonSchemaOf(fields: ResourceFields): CustomFieldJsonSchema {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [key, field] of fields.active) {
    const values = (field.options ?? []).map((option) => option.value);
    const annotations = {
      title: field.label,
      ...(field.description ? { description: field.description } : {}),
      ...(field.required ? { "x-required": true } : {}),
    };
    const number = { type: "number", minimum: -CUSTOM_FIELD_LIMITS.number, maximum: CUSTOM_FIELD_LIMITS.number };
    const types: Record<CustomFieldType, Record<string, unknown>> = {
      text: { type: "string", minLength: 1, maxLength: CUSTOM_FIELD_LIMITS.text },
      number,
      boolean: { type: "boolean" },
      date: { type: "string", format: "date", maxLength: 10 },
      datetime: { type: "string", format: "date-time", maxLength: 24 },
      select: { type: "string", enum: values, maxLength: 100 },
      multiSelect: {
        type: "array",
        items: { type: "string", enum: values, maxLength: 100 },
        maxItems: CUSTOM_FIELD_LIMITS.picks,
        uniqueItems: true,
      },
      url: { type: "string", format: "uri", maxLength: 2_048 },
      email: { type: "string", format: "email", maxLength: 254 },
      currency: {
        type: "object",
        properties: { amount: number, currency: { type: "string", pattern: "^[A-Z]{3}$", maxLength: 3 } },
        required: ["amount", "currency"],
        additionalProperties: false,
      },
    };
    properties[key] = { ...annotations, ...types[field.type] };
  }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: `Custom fields of ${fields.resource}s`,
    description: `customFields of a ${fields.resource} of this organisation: one property per active field, every one optional (a record lacks a field it has no value for; x-required marks the fields creates must give).`,
    type: "object",
    properties,
    additionalProperties: false,
  };
}
