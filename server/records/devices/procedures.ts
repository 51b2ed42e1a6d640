import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { DeletedSchema } from "../accounts/schema";
import { runBulk } from "../bulk";
import { PARTIAL_MODE, PartialBulkResultSchema } from "../bulk.schema";
import { CUSTOM_FIELD_LIST_TEXT } from "../custom-fields/schema";
import {
  type DeviceBulkResult,
  DeviceBulkResultSchema,
  DeviceBulkSchema,
  type DeviceCreate,
  DeviceCreateSchema,
  DeviceListQuerySchema,
  DeviceListSchema,
  DeviceSchema,
  DeviceUpdateSchema,
} from "./schema";
import { bulkUpsertDevices, createDevice, deleteDevice, getDevice, listDevices, updateDevice } from "./service";

const tags = ["Devices"];

const EVENTS_ON_CHANGE =
  "A change of any field records device.updated; in the same transaction, isOnline going from true to false also records device.offline, and isEndOfLife going from false to true also records device.end_of_life (all carrying the device after the change). A request that changes nothing records nothing and leaves updatedAt as it was.";

/**
 * Devices endpoints (docs/api-contract.md §4.4, §3, §6.1). Errors: 400 `bad_request`/`invalid_json`, 401
 * `unauthorized`, 403 `insufficient_scope`, 404 `not_found`, 422 `validation_error`, as documented per operation in
 * OpenAPI.
 */
export const devicesRouter = router({
  /** `GET /devices` (devices:read): a keyset page; filters `accountId`, `isOnline`, `isEndOfLife`, `updatedAfter`. */
  list: apiProcedure("devices:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/devices",
        tags,
        summary: "List devices",
        description: `Keyset-paginated device inventory of the organisation, oldest first by default. Sort allow-list: createdAt, updatedAt, hostname, lastSeenAt (nulls last). An accountId filter naming no account gives an empty page. ${CUSTOM_FIELD_LIST_TEXT}`,
      },
      envelope: "list",
    })
    .input(DeviceListQuerySchema)
    .output(DeviceListSchema)
    .query(({ ctx, input }) => listDevices(ctx.principal.orgId, input)),

  /** `POST /devices` (devices:write): creates a device, 201; records `device.created`. */
  create: apiProcedure("devices:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/devices",
        tags,
        summary: "Create a device",
        description:
          "rmmAgentId, accountId and hostname are required; isOnline defaults to true, isEndOfLife to false, patchCompliant to true. accountId must be an account of the organisation and rmmAgentId unused in it (422 otherwise). Records device.created only, also for a device created offline or end-of-life.",
      },
      successStatus: 201,
    })
    .input(DeviceCreateSchema)
    .output(DeviceSchema)
    .mutation(({ ctx, input }) => createDevice(ctx.principal.orgId, input, ctx.principal)),

  /** `POST /devices/bulk` (devices:write): upserts up to 500 devices matched on rmmAgentId, 200. */
  bulk: apiProcedure("devices:write")
    .meta({
      expensive: "bulk",
      openapi: {
        method: "POST",
        path: "/devices/bulk",
        tags,
        summary: "Bulk upsert devices",
        description: `Creates or updates up to 500 devices in one transaction, matched on rmmAgentId within the organisation: re-sending an existing rmmAgentId updates that device and never duplicates it. Answers 200 with one result per item in request order. Nothing is written when any item is invalid, an rmmAgentId appears twice, or an accountId is not an account of the organisation (422, one detail per item). Created devices record device.created; for updated devices: ${EVENTS_ON_CHANGE} ${PARTIAL_MODE}`,
      },
      partialStatus: 207,
      query: ["mode"],
    })
    .input(DeviceBulkSchema)
    .output(z.union([DeviceBulkResultSchema, PartialBulkResultSchema]))
    .mutation(({ ctx, input }) =>
      runBulk<DeviceCreate, DeviceBulkResult>({
        list: "devices",
        mode: input.mode,
        items: input.devices,
        run: (valid) => bulkUpsertDevices(ctx.principal.orgId, valid, ctx.principal),
        outcomes: (r) => r.results.map((x) => ({ id: x.id, status: x.action })),
      }),
    ),

  /** `GET /devices/{id}` (devices:read). */
  get: apiProcedure("devices:read")
    .meta({ openapi: { method: "GET", path: "/devices/{id}", tags, summary: "Get a device" } })
    .input(z.strictObject({ id: IdSchema }))
    .output(DeviceSchema)
    .query(({ ctx, input }) => getDevice(ctx.principal.orgId, input.id)),

  /** `PATCH /devices/{id}` (devices:write): partial update with the transition events of docs/api-contract.md §3. */
  update: apiProcedure("devices:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/devices/{id}",
        tags,
        summary: "Update a device",
        description: `Partial update; null clears an optional field. A new accountId must be an account of the organisation and a new rmmAgentId unused in it (422 otherwise). ${EVENTS_ON_CHANGE}`,
      },
    })
    .input(DeviceUpdateSchema)
    .output(DeviceSchema)
    .mutation(({ ctx, input }) => updateDevice(ctx.principal.orgId, input, ctx.principal)),

  /** `DELETE /devices/{id}` (devices:write): hard delete, `{ id, deleted: true }`. */
  delete: apiProcedure("devices:write")
    .meta({
      openapi: {
        method: "DELETE",
        path: "/devices/{id}",
        tags,
        summary: "Delete a device",
        description:
          "Removes the device for good (hard delete) and returns { id, deleted: true }. Records device.deleted with the device's tombstone {id, resource, deleted: true, rmmAgentId}.",
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(DeletedSchema)
    .mutation(({ ctx, input }) => deleteDevice(ctx.principal.orgId, input.id, ctx.principal)),
});
