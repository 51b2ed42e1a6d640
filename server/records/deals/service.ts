import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { transaction } from "../../db/transaction";
import type { EventName } from "../../platform/events-feed/schema";
import type { CustomFieldValues } from "../custom-fields/schema";
import { recordEvents, type WriteOrigin } from "../events";
import { defineResource, equalTo, lockReferences } from "../resource";
import {
  CLOSED_STAGES,
  DEAL_DEFAULT_SORT,
  DEAL_DEFAULTS,
  DEAL_FILTERS,
  DEAL_SORT_FIELDS,
  type Deal,
  type DealBulkResult,
  type DealCreate,
  type DealListQuery,
  type DealStage,
  type DealUpdate,
} from "./schema";

const dealSelect = {
  id: true,
  name: true,
  accountId: true,
  estimatedMrr: true,
  probability: true,
  stage: true,
  type: true,
  serviceCategory: true,
  ownerId: true,
  expectedCloseDate: true,
  closedAt: true,
  customFields: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.DealSelect;

type DealRow = Prisma.DealGetPayload<{ select: typeof dealSelect }>;

/**
 * Serialises a deal row exactly as `GET /deals/{id}` returns it (docs/api-contract.md §2.5); events reuse it
 * (docs/api-contract.md §6.2). `estimatedMrr` becomes a JSON number (currency units per month), `expectedCloseDate` a
 * `YYYY-MM-DD` string and the timestamps ISO 8601 UTC strings.
 */
export function toDeal(row: DealRow): Deal {
  return {
    ...row,
    estimatedMrr: row.estimatedMrr.toNumber(),
    expectedCloseDate: row.expectedCloseDate ? toDateString(row.expectedCloseDate) : null,
    closedAt: row.closedAt ? row.closedAt.toISOString() : null,
    customFields: row.customFields as CustomFieldValues,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function toDateString(date: Date): string {
  return date.toISOString().slice(0, 10);
}

// The schema accepts numbers within float noise of 2 decimals (0.1 + 0.2); rounding makes the no-op comparison and
// the stored numeric(12,2) agree.
function roundMoney(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The event a move to `stage` records (docs/api-contract.md §3, §6.1). */
function stageEvent(stage: DealStage): EventName {
  if (stage === "CLOSED_WON") return "deal.closed_won";
  if (stage === "CLOSED_LOST") return "deal.closed_lost";
  return "deal.stage_changed";
}

const deals = defineResource<DealRow, Deal>({
  table: "Deal",
  noun: "Deal",
  select: dealSelect,
  serialise: toDeal,
  writable: {
    accountId: { type: "text" },
    name: { type: "text" },
    estimatedMrr: { type: "money" },
    probability: { type: "int" },
    stage: { type: { enum: "DealStage" } },
    type: { type: { enum: "DealType" } },
    serviceCategory: { type: "text" },
    ownerId: { type: "text" },
    expectedCloseDate: { type: "date" },
    closedAt: { type: "timestamp" },
  },
  customFields: "deal",
});

/**
 * Lists an organisation's deals, one keyset page at a time (docs/api-contract.md §4.3, §4.9); filters `stage`,
 * `accountId`, `ownerId`, `type`, `updatedAfter`.
 * @returns `{ data: Deal[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no deal of the organisation.
 */
export function listDeals(orgId: string, query: DealListQuery) {
  return deals.list(orgId, query, {
    sortable: DEAL_SORT_FIELDS,
    defaultSort: DEAL_DEFAULT_SORT,
    filters: DEAL_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["stage", "accountId", "estimatedMrr", "probability", "createdAt", "updatedAt"],
    terms: [
      ...equalTo("stage", query.stage),
      ...equalTo("accountId", query.accountId),
      ...equalTo("ownerId", query.ownerId),
      ...equalTo("type", query.type),
    ],
  });
}

/**
 * Returns one deal of the organisation (docs/api-contract.md §4.3).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getDeal(orgId: string, id: string): Promise<Deal> {
  return deals.get(orgId, id);
}

/**
 * The values of a new deal with its new id, defaults applied, as the insert takes them; `closedAt` is `now` when it
 * starts in a closed stage.
 */
function newDealRow(input: DealCreate, now: Date) {
  const stage = input.stage ?? DEAL_DEFAULTS.stage;
  return {
    id: newId(),
    name: input.name,
    accountId: input.accountId,
    estimatedMrr: roundMoney(input.estimatedMrr ?? DEAL_DEFAULTS.estimatedMrr).toFixed(2),
    probability: input.probability ?? DEAL_DEFAULTS.probability,
    stage,
    type: input.type ?? DEAL_DEFAULTS.type,
    serviceCategory: input.serviceCategory ?? null,
    ownerId: input.ownerId ?? null,
    expectedCloseDate: input.expectedCloseDate ?? null,
    closedAt: CLOSED_STAGES.has(stage) ? now.toISOString() : null,
    customFields: input.customFields,
  };
}

/**
 * Creates a deal (docs/api-contract.md §4.3) and records `deal.created` (docs/api-contract.md §6.1). A deal created
 * directly in CLOSED_WON or CLOSED_LOST gets `closedAt` = now and records `deal.created` only (it never moved between
 * stages).
 * @throws ApiError `validation_error` (422) when `accountId` names no account of the organisation.
 */
export async function createDeal(orgId: string, input: DealCreate, origin: WriteOrigin): Promise<Deal> {
  return transaction(async (tx) => {
    await lockReferences(orgId, [{ table: "Account", id: input.accountId, path: ["accountId"] }]);
    const now = new Date();
    const [row] = await deals.insert(orgId, [newDealRow(input, now)], now);
    const deal = toDeal(row as DealRow);
    await recordEvents(tx, orgId, origin, [{ name: "deal.created", data: deal }]);
    return deal;
  });
}

/**
 * Applies the given fields to a deal (docs/api-contract.md §4.3, §3). A stage change records one event carrying the
 * deal after the change: `deal.closed_won` / `deal.closed_lost` when the new stage is CLOSED_WON / CLOSED_LOST
 * (`closedAt` stamped now, also when moving from one outcome to the other), `deal.stage_changed` for any other stage
 * (reopening a closed deal is allowed and clears `closedAt`). Changes to other fields alone record `deal.updated`.
 * Every event carries `changedFields` and `previous` of the whole change. A request that changes nothing leaves
 * `updatedAt` as it was. The row is locked for the duration, so two concurrent moves to the same stage record one
 * event.
 * @throws ApiError `not_found` (404); `validation_error` (422) when `accountId` names no account of the organisation.
 */
export async function updateDeal(orgId: string, input: DealUpdate, origin: WriteOrigin): Promise<Deal> {
  const { id, ...fields } = input;
  return transaction(async (tx) => {
    const current = await deals.lock(orgId, id);
    const wanted = { ...fields };
    if (wanted.estimatedMrr !== undefined) wanted.estimatedMrr = roundMoney(wanted.estimatedMrr);
    const changes = await deals.changes(orgId, current, wanted);
    if (Object.keys(changes).length === 0) return current;

    if (changes.accountId)
      await lockReferences(orgId, [{ table: "Account", id: changes.accountId, path: ["accountId"] }]);
    // One clock for both, so a closed deal's closedAt equals the updatedAt of the change that closed it.
    const now = new Date();
    const data = {
      ...changes,
      ...(changes.estimatedMrr !== undefined ? { estimatedMrr: changes.estimatedMrr.toFixed(2) } : {}),
      ...(changes.stage ? { closedAt: CLOSED_STAGES.has(changes.stage) ? now.toISOString() : null } : {}),
    };
    const deal = toDeal((await deals.update(orgId, current, data, now)) as DealRow);
    const name = changes.stage ? stageEvent(changes.stage) : "deal.updated";
    await recordEvents(tx, orgId, origin, [{ name, data: deal, before: current }]);
    return deal;
  });
}

/**
 * Bulk create of up to 500 deals (docs/api-contract.md §4.3; no upsert) in one transaction with one set-based
 * `INSERT … SELECT … FROM jsonb_array_elements` (docs/architecture.md, "Data and migrations"), after checking every
 * `accountId` at once (all-or-nothing). Items follow the rules of {@link createDeal}; one `deal.created` event per deal
 * (docs/api-contract.md §6.1).
 * @returns `{ created, total, results: [{ index, id }] }` in request order.
 * @throws ApiError `validation_error` (422) listing every item whose `accountId` names no account of the organisation
 *         (path `deals.<index>.accountId`); nothing is written then.
 */
export async function bulkCreateDeals(
  orgId: string,
  items: DealCreate[],
  origin: WriteOrigin,
): Promise<DealBulkResult> {
  const now = new Date();
  const rows = items.map((item) => newDealRow(item, now));
  await transaction(async (tx) => {
    await lockReferences(
      orgId,
      items.map((item, index) => ({
        table: "Account",
        id: item.accountId,
        path: ["deals", String(index), "accountId"],
      })),
    );
    const inserted = new Map((await deals.insert(orgId, rows, now, "deals")).map((row) => [row.id, row]));
    await recordEvents(
      tx,
      orgId,
      origin,
      rows.map((row) => {
        const deal = inserted.get(row.id);
        if (!deal) throw new Error(`bulk deal ${row.id} was not inserted`);
        return { name: "deal.created" as const, data: toDeal(deal) };
      }),
    );
  });

  const results = rows.map((row, index) => ({ index, id: row.id }));
  return { created: results.length, total: results.length, results };
}
