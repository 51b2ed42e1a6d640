import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { transaction } from "../../db/transaction";
import { ApiError, type ErrorDetail, notFound } from "../../errors";
import type { CustomFieldValues } from "../custom-fields/schema";
import { type EventInput, recordEvents, tombstone, type WriteOrigin } from "../events";
import { defineResource, equalTo, isUniqueViolation, lockReferences, type UpsertOutcome } from "../resource";
import {
  DEVICE_DEFAULT_SORT,
  DEVICE_FILTERS,
  DEVICE_SORT_FIELDS,
  type Device,
  type DeviceBulkResult,
  type DeviceCreate,
  type DeviceListQuery,
  type DeviceUpdate,
} from "./schema";

const deviceSelect = {
  id: true,
  rmmAgentId: true,
  accountId: true,
  hostname: true,
  deviceType: true,
  os: true,
  isOnline: true,
  isEndOfLife: true,
  patchCompliant: true,
  lastSeenAt: true,
  customFields: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.DeviceSelect;

type DeviceRow = Prisma.DeviceGetPayload<{ select: typeof deviceSelect }>;

/**
 * Serialises a device row exactly as `GET /devices/{id}` returns it (docs/api-contract.md §2.6); device events reuse it
 * (docs/api-contract.md §6.2).
 */
export function toDevice(row: DeviceRow): Device {
  return {
    ...row,
    lastSeenAt: row.lastSeenAt?.toISOString() ?? null,
    customFields: row.customFields as CustomFieldValues,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The events a device change records (docs/api-contract.md §3, §6.1): `device.updated` for any changed field, plus
 * `device.offline` when `isOnline` went true → false and `device.end_of_life` when `isEndOfLife` went false → true.
 * Each carries the device as it is after the change.
 */
function changeEvents(before: Device, after: Device): EventInput[] {
  const events: EventInput[] = [{ name: "device.updated", data: after, before }];
  if (before.isOnline && !after.isOnline) events.push({ name: "device.offline", data: after, before });
  if (!before.isEndOfLife && after.isEndOfLife) events.push({ name: "device.end_of_life", data: after, before });
  return events;
}

/** An ISO timestamp of the API as the UTC millisecond string the database stores; null and undefined pass through. */
function normaliseTimestamp<T extends string | null | undefined>(value: T): T {
  return (typeof value === "string" ? new Date(value).toISOString() : value) as T;
}

function rmmAgentIdTaken(rmmAgentId: string): ApiError {
  return new ApiError("validation_error", `rmmAgentId ${rmmAgentId} is already used by another device`, {
    details: [{ path: ["rmmAgentId"], message: "already used by another device of this organisation" }],
  });
}

const devices = defineResource<DeviceRow, Device>({
  table: "Device",
  noun: "Device",
  select: deviceSelect,
  serialise: toDevice,
  writable: {
    accountId: { type: "text" },
    rmmAgentId: { type: "text" },
    hostname: { type: "text" },
    deviceType: { type: "text" },
    os: { type: "text" },
    isOnline: { type: "boolean", default: "true" },
    isEndOfLife: { type: "boolean", default: "false" },
    patchCompliant: { type: "boolean", default: "true" },
    lastSeenAt: { type: "timestamp" },
  },
  match: "rmmAgentId",
  customFields: "device",
});

/**
 * Inserts new devices as `POST /devices` and the demo seed create them (ids and timestamps stamped here), skipping
 * items whose `rmmAgentId` the organisation already has.
 * @returns the created devices as `GET /devices/{id}` returns them, in no particular order.
 */
export async function insertDevices(orgId: string, items: readonly DeviceCreate[], now: Date): Promise<Device[]> {
  const rows = items.map((item) => ({ ...item, lastSeenAt: normaliseTimestamp(item.lastSeenAt), id: newId() }));
  return (await devices.insert(orgId, rows, now)).map(toDevice);
}

/**
 * Lists an organisation's devices, one keyset page at a time (docs/api-contract.md §4.4, §4.9); filters `accountId`,
 * `isOnline`, `isEndOfLife`, `updatedAfter`; sort allow-list `createdAt`, `updatedAt`, `hostname`, `lastSeenAt` (nulls
 * last).
 * @returns `{ data: Device[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no device of the organisation.
 */
export function listDevices(orgId: string, query: DeviceListQuery) {
  return devices.list(orgId, query, {
    sortable: DEVICE_SORT_FIELDS,
    defaultSort: DEVICE_DEFAULT_SORT,
    filters: DEVICE_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["rmmAgentId", "accountId", "createdAt", "updatedAt"],
    terms: [
      ...equalTo("accountId", query.accountId),
      ...equalTo("isOnline", query.isOnline),
      ...equalTo("isEndOfLife", query.isEndOfLife),
    ],
  });
}

/**
 * Returns one device of the organisation (docs/api-contract.md §4.4).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getDevice(orgId: string, id: string): Promise<Device> {
  return devices.get(orgId, id);
}

/**
 * Creates a device (docs/api-contract.md §4.4) and records `device.created` (docs/api-contract.md §6.1) — only that
 * event, also when the device is created offline or end-of-life: the transition events describe changes of an existing
 * device.
 * @throws ApiError `validation_error` (422) when `accountId` is not an account of the organisation, or when
 *         `rmmAgentId` is already used in the organisation.
 */
export function createDevice(orgId: string, input: DeviceCreate, origin: WriteOrigin): Promise<Device> {
  return transaction(async (tx) => {
    await lockReferences(orgId, [{ table: "Account", id: input.accountId, path: ["accountId"] }]);
    const [device] = await insertDevices(orgId, [input], new Date());
    if (!device) throw rmmAgentIdTaken(input.rmmAgentId);
    await recordEvents(tx, orgId, origin, [{ name: "device.created", data: device }]);
    return device;
  });
}

/**
 * Applies the given fields to a device (docs/api-contract.md §4.4). When a value changes it records `device.updated`,
 * plus `device.offline` when `isOnline` goes true → false and `device.end_of_life` when `isEndOfLife` goes false → true
 * (docs/api-contract.md §3, §6.1), all in the transaction of the change. The device row is locked first, so two
 * concurrent requests cannot both see the same transition. A request that changes nothing leaves `updatedAt` as it was
 * and records nothing.
 * @throws ApiError `not_found` (404); `validation_error` (422) when `accountId` is not an account of the organisation
 *         or `rmmAgentId` is already used by another device.
 */
export async function updateDevice(orgId: string, input: DeviceUpdate, origin: WriteOrigin): Promise<Device> {
  const { id, ...fields } = input;
  try {
    return await transaction(async (tx) => {
      const before = await devices.lock(orgId, id);
      const changes = await devices.changes(orgId, before, {
        ...fields,
        lastSeenAt: normaliseTimestamp(fields.lastSeenAt),
      });
      if (Object.keys(changes).length === 0) return before;
      if (changes.accountId) {
        await lockReferences(orgId, [{ table: "Account", id: changes.accountId, path: ["accountId"] }]);
      }
      const device = toDevice((await devices.update(orgId, before, changes, new Date())) as DeviceRow);
      await recordEvents(tx, orgId, origin, changeEvents(before, device));
      return device;
    });
  } catch (error) {
    if (isUniqueViolation(error) && fields.rmmAgentId) throw rmmAgentIdTaken(fields.rmmAgentId);
    throw error;
  }
}

/**
 * Removes a device for good (docs/api-contract.md §4.4: hard delete) and records `device.deleted` with its tombstone.
 * @returns `{ id, deleted: true }`
 * @throws ApiError `not_found` (404) when missing or owned by another organisation.
 */
export async function deleteDevice(
  orgId: string,
  id: string,
  origin: WriteOrigin,
): Promise<{ id: string; deleted: true }> {
  return transaction(async (tx) => {
    const [device] = await tx.$queryRaw<Array<{ rmmAgentId: string }>>`
      DELETE FROM "Device" WHERE "id" = ${id} AND "orgId" = ${orgId} RETURNING "rmmAgentId"`;
    if (!device) throw notFound("Device", id);
    const data = tombstone("device", id, { rmmAgentId: device.rmmAgentId });
    await recordEvents(tx, orgId, origin, [{ name: "device.deleted", data }]);
    return { id, deleted: true as const };
  });
}

/**
 * Bulk upsert of up to 500 devices matched on `rmmAgentId` (docs/api-contract.md §4.4) in one transaction with
 * set-based SQL (docs/architecture.md, "Data and migrations"), a fixed handful of statements whatever the size: one
 * query checks (and key-share locks) every referenced account, then the kit's upsert (`defineResource`) locks and
 * reads the matched devices, creates the devices whose rmmAgentId is new and applies the others, and one statement
 * records the events. `rmmAgentId`, `accountId` and `hostname` are always applied (every item gives them); optional
 * fields an item leaves out keep their values;
 * `updatedAt` moves only when a value changes. Events as for single writes: `device.created` per created device; per
 * changed device `device.updated`, plus `device.offline` / `device.end_of_life` on those transitions
 * (docs/api-contract.md §3, §6.1).
 * @returns `{ created, updated, total, results: [{ rmmAgentId, id, action }] }` in request order.
 * @throws ApiError `validation_error` (422), nothing written, when an rmmAgentId appears twice in the request or an
 *         accountId is not an account of the organisation (one detail per offending item).
 */
export async function bulkUpsertDevices(
  orgId: string,
  items: DeviceCreate[],
  origin: WriteOrigin,
): Promise<DeviceBulkResult> {
  const seen = new Map<string, number>();
  const duplicates: ErrorDetail[] = [];
  items.forEach((item, index) => {
    const first = seen.get(item.rmmAgentId);
    if (first === undefined) seen.set(item.rmmAgentId, index);
    else duplicates.push({ path: ["devices", String(index), "rmmAgentId"], message: `duplicates item ${first}` });
  });
  if (duplicates.length > 0) {
    throw new ApiError("validation_error", "An rmmAgentId appears more than once in the request", {
      details: duplicates,
    });
  }

  const rows = items.map((item) => ({ ...item, lastSeenAt: normaliseTimestamp(item.lastSeenAt), id: newId() }));
  const outcomes = await transaction(async (tx) => {
    await lockReferences(
      orgId,
      items.map((item, index) => ({
        table: "Account",
        id: item.accountId,
        path: ["devices", String(index), "accountId"],
      })),
    );
    const { outcomes, before } = await devices.upsert(orgId, rows, new Date(), "devices");
    const events = outcomes.flatMap(({ id, action, after }): EventInput[] => {
      if (!after) return [];
      if (action === "created") return [{ name: "device.created", data: after }];
      return changeEvents(before.get(id) as Device, after);
    });
    await recordEvents(tx, orgId, origin, events);
    return outcomes;
  });

  const results = rows.map((row, index) => {
    const { id, action } = outcomes[index] as UpsertOutcome<Device>;
    return { rmmAgentId: row.rmmAgentId, id, action };
  });
  const created = results.filter((r) => r.action === "created").length;
  return { created, updated: results.length - created, total: results.length, results };
}
