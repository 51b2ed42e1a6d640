// An organisation's custom field definitions (docs/api-contract.md §2.13, §4.20): create, read, change and archive
// them, with their events, and purge the values of fields archived for 30 days (docs/architecture.md, "Custom
// fields"). Every change moves the organisation's definitions version on, so each instance's cached validators are
// rebuilt at its next write; values themselves are custom-fields.ts.
import type { Prisma } from "../../db/generated/client";
import { afterCommit, prisma, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { type AuditActor, recordSettingsAudit } from "../../identity/audit-trail/service";
import { recordEvents, type WriteOrigin } from "../events";
import { listPage } from "../pagination";
import { changedFields, defineResource } from "../resource";
import { requestSearchReindex } from "../search/reindex";
import {
  CUSTOM_FIELD_DEFAULT_SORT,
  CUSTOM_FIELD_LIMITS,
  CUSTOM_FIELD_SORT_FIELDS,
  type CustomField,
  type CustomFieldCreate,
  type CustomFieldJsonSchema,
  type CustomFieldListQuery,
  type CustomFieldResource,
  type CustomFieldUpdate,
  OPTION_TYPES,
} from "./schema";
import {
  bumpFieldsVersion,
  type DefinitionRow,
  fieldsOf,
  jsonSchemaOf,
  type StoredOption,
  toCustomField,
} from "./values";

const definitionSelect = {
  id: true,
  resource: true,
  key: true,
  label: true,
  type: true,
  description: true,
  options: true,
  required: true,
  searchable: true,
  createdAt: true,
  updatedAt: true,
  archivedAt: true,
} satisfies Prisma.CustomFieldSelect;

const definitions = defineResource<DefinitionRow, CustomField>({
  table: "CustomField",
  noun: "Custom field",
  select: definitionSelect,
  serialise: toCustomField,
});

/** The settings audit entry of a change to a field, by a member in the settings or a key through /api/v1. */
function audit(
  orgId: string,
  actor: AuditActor | undefined,
  action: "customField.created" | "customField.changed" | "customField.archived",
  field: CustomField,
): Promise<void> {
  if (!actor) return Promise.resolve();
  return recordSettingsAudit(orgId, actor, {
    action,
    target: `${field.resource} field ${field.key} ("${field.label}")`,
    details: { customFieldId: field.id, type: field.type },
  });
}

/** The table that holds each resource's values. */
const TABLES: Record<CustomFieldResource, string> = {
  account: "Account",
  contact: "Contact",
  deal: "Deal",
  device: "Device",
  task: "Task",
};

const DAY_MS = 86_400_000;

/**
 * Lists the organisation's custom fields, one keyset page at a time (docs/api-contract.md §4.20): active ones, and
 * archived ones too with `includeArchived=true`; `resource` narrows to one resource.
 * @returns `{ data: CustomField[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no field of the organisation.
 */
export function listCustomFields(orgId: string, query: CustomFieldListQuery) {
  const filters: Prisma.CustomFieldWhereInput[] = [{ orgId }];
  if (query.resource) filters.push({ resource: query.resource });
  if (!query.includeArchived) filters.push({ archivedAt: null });
  return listPage({
    query,
    fields: CUSTOM_FIELD_SORT_FIELDS,
    defaultSort: CUSTOM_FIELD_DEFAULT_SORT,
    filters,
    findCursor: (id) => definitions.find(orgId, id),
    findMany: (args) =>
      prisma().customField.findMany({ ...(args as Prisma.CustomFieldFindManyArgs), select: definitionSelect }),
    map: toCustomField,
  });
}

/**
 * One custom field of the organisation, archived ones included until their values are purged.
 * @throws ApiError `not_found` (404) when missing, purged or another organisation's.
 */
export function getCustomField(orgId: string, id: string): Promise<CustomField> {
  return definitions.get(orgId, id);
}

function refuse(path: string[], message: string): ApiError {
  return new ApiError("validation_error", `${path.join(".") || "body"} ${message}`, { details: [{ path, message }] });
}

/**
 * Creates a custom field (docs/api-contract.md §4.20) and records `custom_field.created`. Its records have no value
 * for it until one is written. With `actor` (a member in the settings, a key through /api/v1) the settings audit trail
 * records it in the same transaction, as every change of the organisation's configuration.
 * @throws ApiError `validation_error` (422) when the resource already has 100 active fields or 200 archived fields
 *         awaiting their purge (the limits, path `resource`) or the key is taken by a field of the resource, archived
 *         ones included until their values are purged (path `key`).
 */
export function createCustomField(
  orgId: string,
  input: CustomFieldCreate,
  origin: WriteOrigin,
  actor?: AuditActor,
): Promise<CustomField> {
  return transaction(async (tx) => {
    // Taken first: the organisation's definition changes apply one after the other, so the count below is exact.
    await bumpFieldsVersion(orgId);
    const taken = await tx.customField.findFirst({
      where: { orgId, resource: input.resource, key: input.key },
      select: { archivedAt: true },
    });
    if (taken) {
      throw refuse(
        ["key"],
        taken.archivedAt
          ? `is the key of an archived ${input.resource} field: it is free again once its values are purged, ${CUSTOM_FIELD_LIMITS.purgeAfterDays} days after ${taken.archivedAt.toISOString()}`
          : `is already the key of a custom field of ${input.resource}s`,
      );
    }
    const active = await tx.customField.count({ where: { orgId, resource: input.resource, archivedAt: null } });
    if (active >= CUSTOM_FIELD_LIMITS.activePerResource) {
      throw refuse(
        ["resource"],
        `already has ${active} active custom fields, the limit of ${CUSTOM_FIELD_LIMITS.activePerResource} per resource (docs/api-contract.md §8.1): archive one first`,
      );
    }
    // Archived fields keep their values in the records until the purge: without a bound, archiving and creating in a
    // loop would grow every record's stored values and every read's list of keys to leave out.
    const archived = await tx.customField.aggregate({
      where: { orgId, resource: input.resource, archivedAt: { not: null } },
      _count: true,
      _min: { archivedAt: true },
    });
    const oldest = archived._min.archivedAt;
    if (oldest && archived._count >= CUSTOM_FIELD_LIMITS.archivedPerResource) {
      const purged = new Date(oldest.getTime() + CUSTOM_FIELD_LIMITS.purgeAfterDays * DAY_MS);
      throw refuse(
        ["resource"],
        `has ${archived._count} archived custom fields awaiting their purge, the limit of ${CUSTOM_FIELD_LIMITS.archivedPerResource} per resource (docs/api-contract.md §8.1): the oldest is purged after ${purged.toISOString()}`,
      );
    }
    const row = await tx.customField.create({
      data: {
        orgId,
        resource: input.resource,
        key: input.key,
        label: input.label,
        type: input.type,
        description: input.description ?? null,
        options: input.options
          ? input.options.map((option): StoredOption => ({ ...option, archivedAt: null }))
          : undefined,
        required: input.required ?? false,
        searchable: input.searchable ?? false,
      },
      select: definitionSelect,
    });
    const field = toCustomField(row);
    await recordEvents(tx, orgId, origin, [{ name: "custom_field.created", data: field }]);
    await audit(orgId, actor, "customField.created", field);
    return field;
  });
}

/**
 * The options after an update: the given list in its order, each keeping its `archivedAt` while it stays archived
 * (or `now` when newly archived).
 * @throws ApiError `validation_error` (422) when a value the field has is left out (path `options`).
 */
function nextOptions(
  current: readonly StoredOption[],
  given: NonNullable<CustomFieldUpdate["options"]>,
  now: string,
): StoredOption[] {
  const kept = new Set(given.map((option) => option.value));
  const dropped = current.filter((option) => !kept.has(option.value)).map((option) => option.value);
  if (dropped.length > 0) {
    throw refuse(
      ["options"],
      `leaves out ${dropped.join(", ")}: an option cannot be removed (records may hold it), only archived (archived: true)`,
    );
  }
  const before = new Map(current.map((option) => [option.value, option]));
  return given.map(({ value, label, archived }) => ({
    value,
    label,
    archivedAt: archived ? (before.get(value)?.archivedAt ?? now) : null,
  }));
}

/**
 * Changes a custom field's label, description, required and searchable flags or options (docs/api-contract.md
 * §4.20) and records `custom_field.updated` with `changedFields` and `previous`; a request that changes nothing
 * records nothing. Values written before stay as they are (an archived option stays on the records that have it).
 * A change of `searchable` re-indexes the records holding a value of the field in the background, after the commit
 * (`requestSearchReindex`). With `actor`, the settings audit trail records the change in its transaction.
 * @throws ApiError `not_found` (404); `validation_error` (422) when the field is archived (path `id`), options are
 *         given for a type without options or an existing option is left out (path `options`).
 */
export function updateCustomField(
  orgId: string,
  input: CustomFieldUpdate,
  origin: WriteOrigin,
  actor?: AuditActor,
): Promise<CustomField> {
  const { id, options, ...fields } = input;
  return transaction(async (tx) => {
    const current = await definitions.lock(orgId, id);
    if (current.archivedAt) throw refuse(["id"], "names an archived field: it can no longer be changed");
    if (options && !OPTION_TYPES.has(current.type)) throw refuse(["options"], `a ${current.type} field has no options`);
    const now = new Date();
    const wanted: Partial<CustomField> = { ...fields };
    if (options) wanted.options = nextOptions(current.options ?? [], options, now.toISOString());
    const { changes } = changedFields(current, wanted);
    if (Object.keys(changes).length === 0) return current;
    await bumpFieldsVersion(orgId);
    const row = await tx.customField.update({
      where: { id },
      data: {
        label: changes.label,
        description: changes.description,
        required: changes.required,
        searchable: changes.searchable,
        options: changes.options ?? undefined,
        updatedAt: now,
      },
      select: definitionSelect,
    });
    const field = toCustomField(row);
    await recordEvents(tx, orgId, origin, [{ name: "custom_field.updated", data: field, before: current }]);
    await audit(orgId, actor, "customField.changed", field);
    // The trigger marked the field for the search re-index, which runs after the commit, off this request.
    if (changes.searchable !== undefined && field.resource !== "task")
      await afterCommit(() => requestSearchReindex(orgId));
    return field;
  });
}

/**
 * Archives a custom field (`DELETE /custom-fields/{id}`, docs/api-contract.md §4.20): from the commit on, records no
 * longer show its values and writes refuse them; its values are purged 30 days later (see
 * {@link purgeArchivedCustomFields}), when its key is free again; a searchable field's values leave quick search by a
 * background re-index after the commit. Records `custom_field.archived`; archiving an archived field changes nothing
 * and records nothing. With `actor`, the settings audit trail records the archiving in
 * its transaction.
 * @returns the field with its `archivedAt`.
 * @throws ApiError `not_found` (404) when missing, purged or another organisation's.
 */
export function archiveCustomField(
  orgId: string,
  id: string,
  origin: WriteOrigin,
  actor?: AuditActor,
): Promise<CustomField> {
  return transaction(async (tx) => {
    const current = await definitions.lock(orgId, id);
    if (current.archivedAt) return current;
    await bumpFieldsVersion(orgId);
    const now = new Date();
    const row = await tx.customField.update({
      where: { id },
      data: { archivedAt: now, updatedAt: now },
      select: definitionSelect,
    });
    const field = toCustomField(row);
    await recordEvents(tx, orgId, origin, [{ name: "custom_field.archived", data: field, before: current }]);
    await audit(orgId, actor, "customField.archived", field);
    if (field.searchable && field.resource !== "task") await afterCommit(() => requestSearchReindex(orgId));
    return field;
  });
}

/**
 * The JSON Schema (2020-12) of one resource's `customFields` in the organisation, as of its current definitions
 * (docs/api-contract.md §2.13, §4.20).
 */
export async function customFieldJsonSchema(
  orgId: string,
  resource: CustomFieldResource,
): Promise<CustomFieldJsonSchema> {
  return jsonSchemaOf((await fieldsOf(orgId)).of(resource));
}

/** Records whose values one purge statement removes: a short transaction each, whatever the organisation's size. */
const PURGE_BATCH = 5_000;
/** Fields one purge run handles; the next run continues. */
const PURGE_FIELDS_PER_RUN = 100;

/**
 * Purges the values of custom fields archived more than 30 days before `now` (docs/architecture.md, "Custom fields"):
 * removes each field's key from its records' `customFields`, {@link PURGE_BATCH} records a statement, then deletes
 * the definition, which frees its key. Records keep their `updatedAt` and record no event: the values were gone from
 * every answer since the archiving. At most {@link PURGE_FIELDS_PER_RUN} fields a run, oldest first.
 * @returns how many fields were purged and how many records lost a value.
 */
export async function purgeArchivedCustomFields(now = new Date()): Promise<{ fields: number; records: number }> {
  const due = await prisma().customField.findMany({
    where: { archivedAt: { lt: new Date(now.getTime() - CUSTOM_FIELD_LIMITS.purgeAfterDays * DAY_MS) } },
    orderBy: { archivedAt: "asc" },
    take: PURGE_FIELDS_PER_RUN,
    select: { id: true, orgId: true, resource: true, key: true },
  });
  let records = 0;
  for (const field of due) {
    const table = TABLES[field.resource];
    for (;;) {
      // The table comes from the fixed map above, the key is a parameter.
      const purged = await prisma().$executeRawUnsafe(
        `UPDATE "${table}" SET "customFields" = "customFields" - $2
         WHERE "id" IN (SELECT "id" FROM "${table}" WHERE "orgId" = $1 AND "customFields" ? $2 LIMIT ${PURGE_BATCH})`,
        field.orgId,
        field.key,
      );
      records += purged;
      if (purged < PURGE_BATCH) break;
    }
    await transaction(async (tx) => {
      await bumpFieldsVersion(field.orgId);
      await tx.customField.delete({ where: { id: field.id } });
    });
  }
  return { fields: due.length, records };
}
