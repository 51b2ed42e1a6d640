import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { transaction } from "../../db/transaction";
import { recordEvents, type WriteOrigin } from "../events";
import { defineResource, equalTo, lockReferences } from "../resource";
import {
  TOUCHPOINT_DEFAULT_SORT,
  TOUCHPOINT_FILTERS,
  TOUCHPOINT_SORT_FIELDS,
  type Touchpoint,
  type TouchpointCreate,
  type TouchpointListQuery,
} from "./schema";

const touchpointSelect = {
  id: true,
  accountId: true,
  contactId: true,
  type: true,
  direction: true,
  subject: true,
  notes: true,
  occurredAt: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.TouchpointSelect;

type TouchpointRow = Prisma.TouchpointGetPayload<{ select: typeof touchpointSelect }>;

/**
 * Serialises a touchpoint row exactly as `GET /touchpoints/{id}` returns it (docs/api-contract.md §2.9);
 * `touchpoint.created` reuses it (docs/api-contract.md §6.2).
 */
export function toTouchpoint(row: TouchpointRow): Touchpoint {
  return {
    ...row,
    occurredAt: row.occurredAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const touchpoints = defineResource<TouchpointRow, Touchpoint>({
  table: "Touchpoint",
  noun: "Touchpoint",
  select: touchpointSelect,
  serialise: toTouchpoint,
  writable: {
    accountId: { type: "text" },
    contactId: { type: "text" },
    type: { type: { enum: "TouchpointType" } },
    direction: { type: { enum: "TouchpointDirection" } },
    subject: { type: "text" },
    notes: { type: "text" },
    occurredAt: { type: "timestamp" },
  },
});

/**
 * Inserts touchpoints as `POST /touchpoints` and the demo seed log them (ids and timestamps stamped here; `occurredAt`
 * defaults to `now`).
 * @returns the logged touchpoints as `GET /touchpoints/{id}` returns them, in no particular order.
 */
export async function insertTouchpoints(
  orgId: string,
  items: readonly TouchpointCreate[],
  now: Date,
): Promise<Touchpoint[]> {
  const rows = items.map((item) => ({
    ...item,
    id: newId(),
    occurredAt: new Date(item.occurredAt ?? now).toISOString(),
  }));
  return (await touchpoints.insert(orgId, rows, now)).map(toTouchpoint);
}

/**
 * Lists an organisation's touchpoints, one keyset page at a time (docs/api-contract.md §4.7, §4.9); filters
 * `accountId`, `type`, `updatedAfter`; sort allow-list `occurredAt`, `createdAt`, `updatedAt`.
 * @returns `{ data: Touchpoint[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no touchpoint of the organisation.
 */
export function listTouchpoints(orgId: string, query: TouchpointListQuery) {
  return touchpoints.list(orgId, query, {
    sortable: TOUCHPOINT_SORT_FIELDS,
    defaultSort: TOUCHPOINT_DEFAULT_SORT,
    filters: TOUCHPOINT_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["accountId", "occurredAt", "createdAt", "updatedAt"],
    terms: [...equalTo("accountId", query.accountId), ...equalTo("type", query.type)],
  });
}

/**
 * Returns one touchpoint of the organisation (added so that webhook data equals a GET response).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getTouchpoint(orgId: string, id: string): Promise<Touchpoint> {
  return touchpoints.get(orgId, id);
}

/**
 * Logs a touchpoint (docs/api-contract.md §4.7) and records `touchpoint.created` (docs/api-contract.md §6.1) in the
 * same transaction. The referenced account and contact are key-share locked while the touchpoint is written, so neither
 * can be deleted in between. `occurredAt` defaults to the time of the request.
 * @throws ApiError `validation_error` (422) when `accountId` is not an account of the organisation or `contactId` not
 *         a contact of it (one detail per field).
 */
export async function createTouchpoint(
  orgId: string,
  input: TouchpointCreate,
  origin: WriteOrigin,
): Promise<Touchpoint> {
  return transaction(async (tx) => {
    await lockReferences(orgId, [
      { table: "Account", id: input.accountId, path: ["accountId"] },
      ...(input.contactId ? [{ table: "Contact" as const, id: input.contactId, path: ["contactId"] }] : []),
    ]);
    const [touchpoint] = (await insertTouchpoints(orgId, [input], new Date())) as [Touchpoint];
    await recordEvents(tx, orgId, origin, [{ name: "touchpoint.created", data: touchpoint }]);
    return touchpoint;
  });
}
