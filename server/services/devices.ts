import type { Prisma } from "../db/generated/client";
import { newId } from "../db/ids";
import { prisma, transaction } from "../db/transaction";
import { ApiError, type ErrorDetail, notFound } from "../errors";
import {
  DEVICE_DEFAULT_SORT,
  DEVICE_FILTERS,
  DEVICE_SORT_FIELDS,
  type Device,
  type DeviceBulkResult,
  type DeviceCreate,
  type DeviceListQuery,
  type DeviceUpdate,
} from "../schemas/devices";
import { type EventInput, recordEvents, tombstone, type WriteOrigin } from "./events";
import { filterWhere } from "./filters";
import {
  changedFields,
  isUniqueViolation,
  lockForUpdate,
  lockReferences,
  lockRowsBy,
  resourceReader,
  rowById,
} from "./kit";
import { listPage } from "./pagination";

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
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.DeviceSelect;

type DeviceRow = Prisma.DeviceGetPayload<{ select: typeof deviceSelect }>;

/** The columns of {@link deviceSelect} for raw SQL, qualified by a table alias. */
function deviceColumns(alias: string): string {
  return Object.keys(deviceSelect)
    .map((column) => `${alias}."${column}"`)
    .join(", ");
}

/**
 * Serialises a device row exactly as `GET /devices/{id}` returns it (docs/api-contract.md §2.6); device events reuse it
 * (docs/api-contract.md §6.2).
 */
export function toDevice(row: DeviceRow): Device {
  return {
    ...row,
    lastSeenAt: row.lastSeenAt?.toISOString() ?? null,
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

const devices = resourceReader({
  noun: "Device",
  findFirst: rowById<DeviceRow>("Device", deviceSelect),
  serialise: toDevice,
});

/**
 * Lists an organisation's devices, one keyset page at a time (docs/api-contract.md §4.4, §4.9); filters `accountId`,
 * `isOnline`, `isEndOfLife`, `updatedAfter`; sort allow-list `createdAt`, `updatedAt`, `hostname`, `lastSeenAt` (nulls
 * last).
 * @returns `{ data: Device[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no device of the organisation.
 */
export function listDevices(orgId: string, query: DeviceListQuery) {
  const filters: Prisma.DeviceWhereInput[] = [{ orgId }, ...filterWhere(query, DEVICE_FILTERS)];
  if (query.accountId) filters.push({ accountId: query.accountId });
  if (query.isOnline !== undefined) filters.push({ isOnline: query.isOnline });
  if (query.isEndOfLife !== undefined) filters.push({ isEndOfLife: query.isEndOfLife });
  return listPage({
    query,
    fields: DEVICE_SORT_FIELDS,
    defaultSort: DEVICE_DEFAULT_SORT,
    filters,
    findCursor: (id) => devices.find(orgId, id),
    findMany: (args) => prisma().device.findMany({ ...(args as Prisma.DeviceFindManyArgs), select: deviceSelect }),
    map: toDevice,
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
export async function createDevice(orgId: string, input: DeviceCreate, origin: WriteOrigin): Promise<Device> {
  try {
    return await transaction(async (tx) => {
      await lockReferences(orgId, [{ table: "Account", id: input.accountId, path: ["accountId"] }]);
      const data = { ...input, lastSeenAt: normaliseTimestamp(input.lastSeenAt), orgId };
      const device = toDevice(await tx.device.create({ data, select: deviceSelect }));
      await recordEvents(tx, orgId, origin, [{ name: "device.created", data: device }]);
      return device;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw rmmAgentIdTaken(input.rmmAgentId);
    throw error;
  }
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
      await lockForUpdate("Device", "Device", orgId, id);
      const before = await devices.get(orgId, id);
      const { changes } = changedFields(before, { ...fields, lastSeenAt: normaliseTimestamp(fields.lastSeenAt) });
      if (Object.keys(changes).length === 0) return before;
      if (changes.accountId) {
        await lockReferences(orgId, [{ table: "Account", id: changes.accountId, path: ["accountId"] }]);
      }
      const device = toDevice(await tx.device.update({ where: { id }, data: changes, select: deviceSelect }));
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

type UpdatedRow = DeviceRow & { wasOnline: boolean; wasEndOfLife: boolean; changed: boolean };

/**
 * Bulk upsert of up to 500 devices matched on `rmmAgentId` (docs/api-contract.md §4.4) in one transaction with
 * set-based SQL (docs/architecture.md, "Data and migrations"), a fixed handful of statements whatever the size: one
 * query checks (and key-share locks) every referenced account, one `INSERT … ON CONFLICT DO NOTHING` creates the
 * devices whose rmmAgentId is new, one `UPDATE … FROM (SELECT … FOR UPDATE)` applies the others and returns each
 * device's previous online and end-of-life flags next to its new values, and one insert records the events.
 * `rmmAgentId`, `accountId` and `hostname` are always applied; optional fields an item leaves out keep their values;
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

  const now = new Date().toISOString();
  const rows = items.map((item) => ({ ...item, lastSeenAt: normaliseTimestamp(item.lastSeenAt), id: newId() }));
  const outcome = new Map<number, { id: string; action: "created" | "updated" }>();

  await transaction(async (tx) => {
    await lockReferences(
      orgId,
      items.map((item, index) => ({
        table: "Account",
        id: item.accountId,
        path: ["devices", String(index), "accountId"],
      })),
    );

    const events: EventInput[] = [];
    const agents = rows.map((row) => row.rmmAgentId);
    const locked = await lockRowsBy<DeviceRow>("Device", orgId, "rmmAgentId", agents, Object.keys(deviceSelect));
    const before = new Map(locked.map((row) => [row.id, toDevice(row)]));
    let pending = rows.map((row, index) => ({ row, index }));
    // A matched device deleted between the INSERT and the UPDATE is created on the next pass; two passes suffice.
    for (let pass = 0; pass < 3 && pending.length > 0; pass++) {
      const inserted = await tx.$queryRawUnsafe<DeviceRow[]>(
        `INSERT INTO "Device" ("id", "orgId", "accountId", "rmmAgentId", "hostname", "deviceType", "os", "isOnline",
                               "isEndOfLife", "patchCompliant", "lastSeenAt", "createdAt", "updatedAt")
         SELECT e->>'id', $1, e->>'accountId', e->>'rmmAgentId', e->>'hostname', e->>'deviceType', e->>'os',
                COALESCE((e->>'isOnline')::boolean, true), COALESCE((e->>'isEndOfLife')::boolean, false),
                COALESCE((e->>'patchCompliant')::boolean, true), (e->>'lastSeenAt')::timestamptz AT TIME ZONE 'UTC',
                $3::timestamptz AT TIME ZONE 'UTC', $3::timestamptz AT TIME ZONE 'UTC'
         FROM jsonb_array_elements($2::jsonb) AS e
         ON CONFLICT ("orgId", "rmmAgentId") DO NOTHING
         RETURNING ${deviceColumns('"Device"')}`,
        orgId,
        JSON.stringify(pending.map((p) => p.row)),
        now,
      );
      const createdIds = new Set(inserted.map((row) => row.id));
      for (const row of inserted) events.push({ name: "device.created", data: toDevice(row) });
      for (const p of pending) if (createdIds.has(p.row.id)) outcome.set(p.index, { id: p.row.id, action: "created" });
      const conflicting = pending.filter((p) => !createdIds.has(p.row.id));
      pending = [];
      if (conflicting.length === 0) break;

      // The sub-select locks the matched rows (in id order, against deadlocks between concurrent bulks) and reads
      // their latest committed flags, so the transitions computed here are exact even under concurrent writes.
      const updated = await tx.$queryRawUnsafe<UpdatedRow[]>(
        `UPDATE "Device" AS d SET
           "accountId" = n."accountId", "hostname" = n."hostname", "deviceType" = n."deviceType", "os" = n."os",
           "isOnline" = n."isOnline", "isEndOfLife" = n."isEndOfLife", "patchCompliant" = n."patchCompliant",
           "lastSeenAt" = n."lastSeenAt",
           "updatedAt" = CASE WHEN n."changed" THEN $3::timestamptz AT TIME ZONE 'UTC' ELSE d."updatedAt" END
         FROM (
           SELECT c."id", c."isOnline" AS "wasOnline", c."isEndOfLife" AS "wasEndOfLife", v.*,
                  (c."accountId", c."hostname", c."deviceType", c."os", c."isOnline", c."isEndOfLife",
                   c."patchCompliant", c."lastSeenAt")
                  IS DISTINCT FROM
                  (v."accountId", v."hostname", v."deviceType", v."os", v."isOnline", v."isEndOfLife",
                   v."patchCompliant", v."lastSeenAt") AS "changed"
           FROM jsonb_array_elements($2::jsonb) AS e
           JOIN "Device" AS c ON c."orgId" = $1 AND c."rmmAgentId" = e->>'rmmAgentId'
           CROSS JOIN LATERAL (
             SELECT e->>'accountId' AS "accountId", e->>'hostname' AS "hostname",
                    CASE WHEN e ? 'deviceType' THEN e->>'deviceType' ELSE c."deviceType" END AS "deviceType",
                    CASE WHEN e ? 'os' THEN e->>'os' ELSE c."os" END AS "os",
                    CASE WHEN e ? 'isOnline' THEN (e->>'isOnline')::boolean ELSE c."isOnline" END AS "isOnline",
                    CASE WHEN e ? 'isEndOfLife' THEN (e->>'isEndOfLife')::boolean ELSE c."isEndOfLife" END AS "isEndOfLife",
                    CASE WHEN e ? 'patchCompliant' THEN (e->>'patchCompliant')::boolean ELSE c."patchCompliant" END AS "patchCompliant",
                    CASE WHEN e ? 'lastSeenAt' THEN (e->>'lastSeenAt')::timestamptz AT TIME ZONE 'UTC' ELSE c."lastSeenAt" END AS "lastSeenAt"
           ) AS v
           ORDER BY c."id"
           FOR UPDATE OF c
         ) AS n
         WHERE d."id" = n."id"
         RETURNING ${deviceColumns("d")}, n."wasOnline", n."wasEndOfLife", n."changed"`,
        orgId,
        JSON.stringify(conflicting.map((p) => p.row)),
        now,
      );
      const byRmmAgentId = new Map<string, string>();
      for (const { wasOnline, wasEndOfLife, changed, ...row } of updated) {
        byRmmAgentId.set(row.rmmAgentId, row.id);
        const device = toDevice(row);
        const previous = before.get(row.id) ?? { ...device, isOnline: wasOnline, isEndOfLife: wasEndOfLife };
        if (changed) events.push(...changeEvents(previous, device));
      }
      for (const p of conflicting) {
        const id = byRmmAgentId.get(p.row.rmmAgentId);
        if (id) outcome.set(p.index, { id, action: "updated" });
        else pending.push(p);
      }
    }
    if (pending.length > 0) throw new Error("device bulk upsert did not settle after 3 passes");
    await recordEvents(tx, orgId, origin, events);
  });

  const results = rows.map((row, index) => {
    const result = outcome.get(index);
    if (!result) throw new Error(`bulk item ${index} has no outcome`);
    return { rmmAgentId: row.rmmAgentId, ...result };
  });
  const created = results.filter((r) => r.action === "created").length;
  return { created, updated: results.length - created, total: results.length, results };
}
