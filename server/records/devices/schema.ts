import { z } from "zod";
import {
  BooleanQuerySchema,
  DateTimeInputSchema,
  IdSchema,
  ListQueryBase,
  listOf,
  sortParam,
  TimestampSchema,
  toNfc,
} from "../../contract/common";
import {
  DEVICE_BULK_EXAMPLE,
  DEVICE_BULK_RESULT_EXAMPLE,
  DEVICE_CREATE_EXAMPLE,
  DEVICE_EXAMPLE,
  DEVICE_UPDATE_EXAMPLE,
} from "../../contract/examples";
import { BULK_MAX } from "../accounts/schema";
import { BulkModeSchema, bulkItem } from "../bulk.schema";
import { CustomFieldsInputSchema, CustomFieldValuesSchema, withCustomFieldParams } from "../custom-fields/schema";
import { type FilterTable, filterParams } from "../filters.schema";

/**
 * Sortable device fields (docs/api-contract.md §4.9.2: `createdAt`, `updatedAt`, `hostname`, `lastSeenAt`; nulls last).
 */
export const DEVICE_SORT_FIELDS = {
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
  hostname: { nullable: false },
  lastSeenAt: { nullable: true },
} as const;

/** Default device order (docs/api-contract.md §4.9.2: `createdAt:asc`, ties by id). */
export const DEVICE_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

const rmmAgentId = z
  .string()
  .overwrite(toNfc)
  .min(1)
  .max(255)
  .describe(
    "Agent identifier in the remote-monitoring tool, 1 to 255 characters, stored in Unicode NFC and compared exactly (case-sensitive); unique per organisation; the match key of bulk upsert.",
  );
const accountId = IdSchema.describe("Id of the account the device belongs to; must be an account of the organisation.");
const hostname = z.string().trim().min(1).max(255).describe("Host name, 1 to 255 characters (trimmed).");
const deviceType = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .nullable()
  .describe("Kind of device, free text up to 100 characters (e.g. WORKSTATION, SERVER, LAPTOP).");
const os = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .nullable()
  .describe("Operating system and version, free text up to 255 characters.");
const isOnline = z
  .boolean()
  .describe("Whether the agent currently reports in. A change from true to false records device.offline.");
const isEndOfLife = z
  .boolean()
  .describe(
    "Whether the device is past its vendor's end of life. A change from false to true records device.end_of_life.",
  );
const patchCompliant = z.boolean().describe("Whether the device has every required patch installed.");
const lastSeenAt = DateTimeInputSchema.nullable().describe(
  "When the agent last reported in: ISO 8601 timestamp with a time zone (Z or ±hh:mm); stored in UTC.",
);

/** A device as every device endpoint returns it and as device events carry it (docs/api-contract.md §2.6, §6.2). */
export const DeviceSchema = z
  .object({
    id: IdSchema,
    rmmAgentId: z
      .string()
      .max(255)
      .describe("Agent identifier in the remote-monitoring tool; unique per organisation."),
    accountId: IdSchema.describe("Id of the account the device belongs to."),
    hostname: z.string().max(255).describe("Host name."),
    deviceType: z.string().max(100).nullable().describe("Kind of device, free text."),
    os: z.string().max(255).nullable().describe("Operating system and version, free text."),
    isOnline: z.boolean().describe("Whether the agent currently reports in."),
    isEndOfLife: z.boolean().describe("Whether the device is past its vendor's end of life."),
    patchCompliant: z.boolean().describe("Whether the device has every required patch installed."),
    lastSeenAt: TimestampSchema.nullable().describe("When the agent last reported in (ISO 8601 UTC); null if never."),
    customFields: CustomFieldValuesSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ id: "Device", example: DEVICE_EXAMPLE });

/** A device as returned by the API. */
export type Device = z.infer<typeof DeviceSchema>;

/**
 * Body of `POST /devices` and one item of `POST /devices/bulk` (docs/api-contract.md §2.6, §4.4): `rmmAgentId`,
 * `accountId` and `hostname` required; `isOnline` defaults to true, `isEndOfLife` to false, `patchCompliant` to true.
 * Unknown fields are refused (422).
 */
export const DeviceCreateSchema = z
  .strictObject({
    rmmAgentId,
    accountId,
    hostname,
    deviceType: deviceType.optional(),
    os: os.optional(),
    isOnline: isOnline.optional().describe("Whether the agent currently reports in; default true."),
    isEndOfLife: isEndOfLife.optional().describe("Whether the device is past its end of life; default false."),
    patchCompliant: patchCompliant.optional().describe("Whether every required patch is installed; default true."),
    lastSeenAt: lastSeenAt.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ id: "DeviceCreate", examples: [DEVICE_CREATE_EXAMPLE] });

/** A validated device creation body. */
export type DeviceCreate = z.infer<typeof DeviceCreateSchema>;

/** Body of `PATCH /devices/{id}`: any subset of the create fields; `null` clears an optional field. */
export const DeviceUpdateSchema = z
  .strictObject({
    id: IdSchema,
    rmmAgentId: rmmAgentId.optional(),
    accountId: accountId.optional(),
    hostname: hostname.optional(),
    deviceType: deviceType.optional(),
    os: os.optional(),
    isOnline: isOnline.optional(),
    isEndOfLife: isEndOfLife.optional(),
    patchCompliant: patchCompliant.optional(),
    lastSeenAt: lastSeenAt.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ examples: [DEVICE_UPDATE_EXAMPLE] });

/** A validated device update (path id plus changed fields). */
export type DeviceUpdate = z.infer<typeof DeviceUpdateSchema>;

/** Filterable fields of `GET /devices` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const DEVICE_FILTERS: FilterTable = {
  hostname: "text",
  rmmAgentId: "key",
  deviceType: "text",
  os: "text",
  accountId: "id",
  lastSeenAt: "date",
  createdAt: "date",
  updatedAt: "date",
};

/**
 * Query of `GET /devices` (docs/api-contract.md §4.4, §4.9): filters `accountId`, `isOnline`, `isEndOfLife`,
 * `updatedAfter`.
 */
export const DeviceListQuerySchema = withCustomFieldParams({
  ...ListQueryBase,
  sort: sortParam(Object.keys(DEVICE_SORT_FIELDS), "createdAt:asc", true),
  accountId: IdSchema.describe("Only devices of this account (an unknown id gives an empty list).").optional(),
  isOnline: BooleanQuerySchema.describe("Only devices that are online (true) or offline (false).").optional(),
  isEndOfLife: BooleanQuerySchema.describe("Only devices that are (true) or are not (false) end-of-life.").optional(),
  ...filterParams(DEVICE_FILTERS),
});

/** A validated device list query. */
export type DeviceListQuery = z.infer<typeof DeviceListQuerySchema>;

/** A page of devices. */
export const DeviceListSchema = listOf(DeviceSchema);

/**
 * Body of `POST /devices/bulk` (docs/api-contract.md §4.4): 1 to 500 devices, matched on `rmmAgentId` within the
 * organisation.
 */
export const DeviceBulkSchema = z
  .strictObject({
    devices: z
      .array(bulkItem(DeviceCreateSchema))
      .min(1)
      .max(BULK_MAX)
      .describe(
        `1 to ${BULK_MAX} devices. An item whose rmmAgentId exists in the organisation updates that device (rmmAgentId, accountId and hostname are always applied; optional fields left out keep their values); any other item creates one. An rmmAgentId may appear once per request.`,
      ),
    mode: BulkModeSchema,
  })
  .meta({ examples: [DEVICE_BULK_EXAMPLE] });

/**
 * Response data of `POST /devices/bulk` (docs/api-contract.md §4.4): counts and one result per item, in request order.
 */
export const DeviceBulkResultSchema = z
  .object({
    created: z.int().min(0).max(BULK_MAX).describe("Devices created."),
    updated: z
      .int()
      .min(0)
      .max(BULK_MAX)
      .describe("Existing devices matched by rmmAgentId and updated (also when nothing changed)."),
    total: z.int().min(0).max(BULK_MAX).describe("created + updated; equals the number of items sent."),
    results: z
      .array(
        z.object({
          rmmAgentId: z.string().max(255).describe("The item's rmmAgentId."),
          id: IdSchema.describe("Id of the device the item created or updated."),
          action: z.enum(["created", "updated"]).describe("What happened to this item."),
        }),
      )
      .max(BULK_MAX)
      .describe("One result per item, in request order."),
  })
  .meta({ id: "DeviceBulkResult", example: DEVICE_BULK_RESULT_EXAMPLE });

/** The bulk upsert result. */
export type DeviceBulkResult = z.infer<typeof DeviceBulkResultSchema>;
