import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import {
  CUSTOM_FIELD_LIMITS,
  CustomFieldCreateSchema,
  CustomFieldJsonSchemaSchema,
  CustomFieldListQuerySchema,
  CustomFieldListSchema,
  CustomFieldSchema,
  CustomFieldSchemaQuerySchema,
  CustomFieldUpdateSchema,
} from "./schema";
import {
  archiveCustomField,
  createCustomField,
  customFieldJsonSchema,
  getCustomField,
  listCustomFields,
  updateCustomField,
} from "./service";

const tags = ["Custom fields"];

/**
 * Custom field definitions (docs/api-contract.md §2.13, §4.20): the fields an organisation adds to its accounts,
 * contacts, deals, devices and tasks, whose values every record of the resource then carries in `customFields`.
 * Thin: every rule lives in `server/records/custom-fields/service.ts`. Errors: 400, 401, 403, 404, 422 as
 * documented per operation in OpenAPI.
 */
export const customFieldsRouter = router({
  /** `GET /custom-fields` (custom_fields:read): a keyset page of definitions. */
  list: apiProcedure("custom_fields:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/custom-fields",
        tags,
        summary: "List custom fields",
        description:
          "The organisation's custom field definitions, oldest first: active ones, archived ones too with includeArchived=true (until their values are purged), of one resource with resource=….",
      },
      envelope: "list",
    })
    .input(CustomFieldListQuerySchema)
    .output(CustomFieldListSchema)
    .query(({ ctx, input }) => listCustomFields(ctx.principal.orgId, input)),

  /** `POST /custom-fields` (custom_fields:write): defines a field, 201. */
  create: apiProcedure("custom_fields:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/custom-fields",
        tags,
        summary: "Create a custom field",
        description: `Defines a field of a resource; records of the resource carry its values in customFields from now on (none until one is written). resource, key and type never change. At most ${CUSTOM_FIELD_LIMITS.activePerResource} active fields per resource: the next is 422 naming the limit. A key already used by a field of the resource, archived ones included until their values are purged, is 422. Records custom_field.created.`,
      },
      successStatus: 201,
    })
    .input(CustomFieldCreateSchema)
    .output(CustomFieldSchema)
    .mutation(({ ctx, input }) => createCustomField(ctx.principal.orgId, input, ctx.principal, ctx.auditActor)),

  /** `GET /custom-fields/schema` (custom_fields:read): one resource's fields as JSON Schema. */
  schema: apiProcedure("custom_fields:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/custom-fields/schema",
        tags,
        summary: "Get a resource's custom fields as JSON Schema",
        description:
          "The JSON Schema (2020-12) of customFields of the resource's records in this organisation: one optional property per active field, typed as its values are (x-required marks the fields creates must give). Generate types from it (npm run sdk:generate -- --custom-fields) or validate records with any JSON Schema validator. The OpenAPI document stays the same whatever an organisation defines; this is where its own shape is.",
      },
    })
    .input(CustomFieldSchemaQuerySchema)
    .output(CustomFieldJsonSchemaSchema)
    .query(({ ctx, input }) => customFieldJsonSchema(ctx.principal.orgId, input.resource)),

  /** `GET /custom-fields/{id}` (custom_fields:read). */
  get: apiProcedure("custom_fields:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/custom-fields/{id}",
        tags,
        summary: "Get a custom field",
        description: "One definition, archived ones included until their values are purged.",
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(CustomFieldSchema)
    .query(({ ctx, input }) => getCustomField(ctx.principal.orgId, input.id)),

  /** `PATCH /custom-fields/{id}` (custom_fields:write). */
  update: apiProcedure("custom_fields:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/custom-fields/{id}",
        tags,
        summary: "Update a custom field",
        description:
          "Changes label, description, required, searchable or options (the complete list: new values are added, an option is archived with archived: true and never removed). resource, key and type never change (422 as unknown fields); an archived field cannot be changed (422). Records custom_field.updated with changedFields and previous.",
      },
    })
    .input(CustomFieldUpdateSchema)
    .output(CustomFieldSchema)
    .mutation(({ ctx, input }) => updateCustomField(ctx.principal.orgId, input, ctx.principal, ctx.auditActor)),

  /** `DELETE /custom-fields/{id}` (custom_fields:write): archives the field. */
  delete: apiProcedure("custom_fields:write")
    .meta({
      openapi: {
        method: "DELETE",
        path: "/custom-fields/{id}",
        tags,
        summary: "Archive a custom field",
        description: `Archives the field and answers it with archivedAt: its values disappear from every read, list, event and webhook at once, writes naming it are refused (422), and its values are purged ${CUSTOM_FIELD_LIMITS.purgeAfterDays} days later, when its key is free again. Records custom_field.archived; archiving an archived field changes nothing.`,
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(CustomFieldSchema)
    .mutation(({ ctx, input }) => archiveCustomField(ctx.principal.orgId, input.id, ctx.principal, ctx.auditActor)),
});
