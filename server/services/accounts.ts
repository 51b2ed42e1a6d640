import type { Prisma } from "../db/generated/client";
import { newId } from "../db/ids";
import { equalsInsensitive } from "../db/like";
import { prisma, transaction } from "../db/transaction";
import { ApiError, notFound } from "../errors";
import {
  ACCOUNT_DEFAULT_SORT,
  ACCOUNT_FILTERS,
  ACCOUNT_SORT_FIELDS,
  type Account,
  type AccountBulkResult,
  type AccountCreate,
  type AccountListQuery,
  type AccountUpdate,
} from "../schemas/accounts";
import { getContact } from "./contacts";
import { type EventInput, recordEvents, tombstone, type WriteOrigin } from "./events";
import { filterWhere } from "./filters";
import { recordNewAccountScores } from "./health";
import { changedFields, isUniqueViolation, lockForUpdate, lockRowsBy, resourceReader, rowById } from "./kit";
import { listPage } from "./pagination";
import { getTask } from "./tasks";

const accountSelect = {
  id: true,
  name: true,
  lifecycleStatus: true,
  industry: true,
  employeeCount: true,
  domain: true,
  externalId: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.AccountSelect;

type AccountRow = Prisma.AccountGetPayload<{ select: typeof accountSelect }>;

/**
 * Serialises an account row exactly as `GET /accounts/{id}` returns it (docs/api-contract.md §2.3); webhooks reuse it
 * (docs/api-contract.md §6.2).
 */
export function toAccount(row: AccountRow): Account {
  return { ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}

function externalIdTaken(externalId: string): ApiError {
  return new ApiError("validation_error", `externalId ${externalId} is already used by another account`, {
    details: [{ path: ["externalId"], message: "already used by another account of this organisation" }],
  });
}

const accounts = resourceReader({
  noun: "Account",
  findFirst: rowById<AccountRow>("Account", accountSelect),
  serialise: toAccount,
});

/**
 * The organisation's accounts with these ids, in one query (`expand=account` costs one query a page).
 * @returns id → account as `GET /accounts/{id}` returns it; ids of no account of the organisation are absent.
 */
export async function accountsByIds(orgId: string, ids: readonly string[]): Promise<Map<string, Account>> {
  if (ids.length === 0) return new Map();
  const rows = await prisma().account.findMany({
    where: { orgId, id: { in: [...new Set(ids)] } },
    select: accountSelect,
  });
  return new Map(rows.map((row) => [row.id, toAccount(row)]));
}

/**
 * Lists an organisation's accounts, one keyset page at a time (docs/api-contract.md §4.1, §4.9).
 * @returns `{ data: Account[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no account of the organisation.
 */
export function listAccounts(orgId: string, query: AccountListQuery) {
  const filters: Prisma.AccountWhereInput[] = [{ orgId }, ...filterWhere(query, ACCOUNT_FILTERS)];
  if (query.lifecycle) filters.push({ lifecycleStatus: query.lifecycle });
  if (query.industry) filters.push({ industry: equalsInsensitive(query.industry) });
  return listPage({
    query,
    fields: ACCOUNT_SORT_FIELDS,
    defaultSort: ACCOUNT_DEFAULT_SORT,
    filters,
    findCursor: (id) => accounts.find(orgId, id),
    findMany: (args) => prisma().account.findMany({ ...(args as Prisma.AccountFindManyArgs), select: accountSelect }),
    map: toAccount,
  });
}

/**
 * Returns one account of the organisation.
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getAccount(orgId: string, id: string): Promise<Account> {
  return accounts.get(orgId, id);
}

/**
 * Creates an account (docs/api-contract.md §4.1); `lifecycleStatus` defaults to PROSPECT. Records `account.created`
 * (docs/api-contract.md §6.1).
 * @throws ApiError `validation_error` (422) when `externalId` is already used in the organisation.
 */
export async function createAccount(orgId: string, input: AccountCreate, origin: WriteOrigin): Promise<Account> {
  try {
    return await transaction(async (tx) => {
      const row = await tx.account.create({ data: { ...input, orgId }, select: accountSelect });
      const account = toAccount(row);
      await recordNewAccountScores(orgId, [account.id], row.createdAt);
      await recordEvents(tx, orgId, origin, [{ name: "account.created", data: account }]);
      return account;
    });
  } catch (error) {
    if (isUniqueViolation(error) && input.externalId) throw externalIdTaken(input.externalId);
    throw error;
  }
}

/**
 * Applies the given fields to an account (docs/api-contract.md §4.1) and records `account.updated`
 * (docs/api-contract.md §6.1), or `account.deleted` when `event` says so (soft delete). The row is locked for the
 * transaction. A request that changes nothing leaves `updatedAt` as it was and records nothing.
 * @throws ApiError `not_found` (404); `validation_error` (422) when `externalId` is already used.
 */
export async function updateAccount(
  orgId: string,
  input: AccountUpdate,
  origin: WriteOrigin,
  event: "account.updated" | "account.deleted" = "account.updated",
): Promise<Account> {
  const { id, ...fields } = input;
  try {
    return await transaction(async (tx) => {
      await lockForUpdate("Account", "Account", orgId, id);
      const current = await accounts.get(orgId, id);
      const { changes } = changedFields(current, fields);
      if (Object.keys(changes).length === 0) return current;
      const account = toAccount(
        await tx.account.update({ where: { id, orgId }, data: changes, select: accountSelect }),
      );
      await recordEvents(tx, orgId, origin, [{ name: event, data: account, before: current }]);
      return account;
    });
  } catch (error) {
    if (isUniqueViolation(error) && fields.externalId) throw externalIdTaken(fields.externalId);
    throw error;
  }
}

/**
 * Deletes an account (docs/api-contract.md §3, §4.1): soft by default (lifecycleStatus becomes CHURNED, the record
 * stays readable, `account.deleted` is recorded with the churned account); `force` removes the row with its deals,
 * devices, contact links, touchpoints and signals, and the notes on it, its deals and its contracts (tasks keep
 * existing, unlinked). A hard delete records an event for every record it removes or changes, dependents first:
 * `note.deleted`, `touchpoint.deleted`, `device.deleted`, `deal.deleted` (tombstones), `task.updated` for unlinked
 * tasks, `contact.updated` for contacts that lose the link, then `account.deleted` with the account's tombstone.
 * @returns the churned account, or `{ id, deleted: true }` after a hard delete.
 * @throws ApiError `not_found` (404) when missing or owned by another organisation.
 */
export async function deleteAccount(
  orgId: string,
  id: string,
  force: boolean,
  origin: WriteOrigin,
): Promise<Account | { id: string; deleted: true }> {
  if (!force) {
    const current = await getAccount(orgId, id);
    if (current.lifecycleStatus === "CHURNED") return current;
    return updateAccount(orgId, { id, lifecycleStatus: "CHURNED" }, origin, "account.deleted");
  }
  return transaction(async (tx) => {
    await lockForUpdate("Account", "Account", orgId, id);
    const row = await tx.account.findFirst({ where: { orgId, id }, select: accountSelect });
    if (!row) throw notFound("Account", id);
    const owned = { where: { orgId, accountId: id }, select: { id: true } } as const;
    const dealIds = (await tx.deal.findMany(owned)).map((deal) => deal.id);
    const contractIds = (await tx.contract.findMany(owned)).map((contract) => contract.id);
    const devices = await tx.device.findMany({ ...owned, select: { id: true, rmmAgentId: true } });
    const touchpointIds = (await tx.touchpoint.findMany(owned)).map((touchpoint) => touchpoint.id);
    const taskIds = (
      await tx.task.findMany({
        where: { orgId, OR: [{ accountId: id }, { dealId: { in: dealIds } }] },
        select: { id: true },
      })
    ).map((task) => task.id);
    const contactIds = (
      await tx.contactAccount.findMany({ where: { orgId, accountId: id }, select: { contactId: true } })
    ).map((link) => link.contactId);
    const tasksBefore = await Promise.all(taskIds.map((taskId) => getTask(orgId, taskId)));
    const contactsBefore = await Promise.all(contactIds.map((contactId) => getContact(orgId, contactId)));
    const notes = {
      orgId,
      OR: [
        { objectType: "Account" as const, objectId: id },
        { objectType: "Deal" as const, objectId: { in: dealIds } },
        { objectType: "Contract" as const, objectId: { in: contractIds } },
      ],
    };
    const noteIds = (await tx.note.findMany({ where: notes, select: { id: true } })).map((note) => note.id);
    await tx.note.deleteMany({ where: notes });
    await tx.account.delete({ where: { id } });
    // Unlinking changed these records' representations: their updatedAt moves, as for any change (updatedAfter).
    const now = new Date();
    await tx.task.updateMany({ where: { orgId, id: { in: taskIds } }, data: { updatedAt: now } });
    await tx.contact.updateMany({ where: { orgId, id: { in: contactIds } }, data: { updatedAt: now } });

    const events: EventInput[] = [
      ...noteIds.map((noteId) => ({ name: "note.deleted" as const, data: tombstone("note", noteId) })),
      ...touchpointIds.map((touchpointId) => ({
        name: "touchpoint.deleted" as const,
        data: tombstone("touchpoint", touchpointId),
      })),
      ...devices.map((device) => ({
        name: "device.deleted" as const,
        data: tombstone("device", device.id, { rmmAgentId: device.rmmAgentId }),
      })),
      ...dealIds.map((dealId) => ({ name: "deal.deleted" as const, data: tombstone("deal", dealId) })),
    ];
    for (const before of tasksBefore) {
      events.push({ name: "task.updated", data: await getTask(orgId, before.id), before });
    }
    for (const before of contactsBefore) {
      events.push({ name: "contact.updated", data: await getContact(orgId, before.id), before });
    }
    events.push({ name: "account.deleted", data: tombstone("account", id, { externalId: row.externalId }) });
    await recordEvents(tx, orgId, origin, events);
    return { id, deleted: true as const };
  });
}

interface BulkRow {
  id: string;
  externalId: string | null;
  changed?: boolean;
}

/**
 * Bulk upsert of up to 500 accounts (docs/api-contract.md §4.1) in one transaction with set-based SQL
 * (docs/architecture.md, "Data and migrations"): one `INSERT … ON CONFLICT DO NOTHING` creates every item whose
 * `externalId` is new (or absent), one `UPDATE … FROM` applies the others to the matching accounts; fields an item
 * leaves out keep their values, and `updatedAt` moves only when a value changes. Records `account.created` per created
 * and `account.updated` per changed account (docs/api-contract.md §6.1).
 * @returns `{ created, updated, total, results: [{ externalId, id, action }] }` in request order.
 * @throws ApiError `validation_error` (422) when an externalId appears twice in the request.
 */
export async function bulkUpsertAccounts(
  orgId: string,
  items: AccountCreate[],
  origin: WriteOrigin,
): Promise<AccountBulkResult> {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    if (!item.externalId) return;
    const first = seen.get(item.externalId);
    if (first !== undefined) {
      throw new ApiError("validation_error", `externalId ${item.externalId} appears more than once in the request`, {
        details: [{ path: ["accounts", String(index), "externalId"], message: `duplicates item ${first}` }],
      });
    }
    seen.set(item.externalId, index);
  });

  const now = new Date().toISOString();
  const rows = items.map((item) => ({ ...item, id: newId() }));
  const outcome = new Map<number, { id: string; action: "created" | "updated" }>();

  const changedIds: string[] = [];
  await transaction(async (tx) => {
    const externalIds = rows.flatMap((row) => (row.externalId ? [row.externalId] : []));
    const locked = await lockRowsBy<AccountRow>(
      "Account",
      orgId,
      "externalId",
      externalIds,
      Object.keys(accountSelect),
    );
    const before = new Map(locked.map((row) => [row.id, toAccount(row)]));
    let pending = rows.map((row, index) => ({ row, index }));
    // A matched account deleted between the two statements is created on the next pass; two passes always suffice.
    for (let pass = 0; pass < 3 && pending.length > 0; pass++) {
      const inserted = await tx.$queryRawUnsafe<BulkRow[]>(
        `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "industry", "employeeCount", "domain", "externalId", "createdAt", "updatedAt")
         SELECT e->>'id', $1, e->>'name', COALESCE(e->>'lifecycleStatus', 'PROSPECT')::"LifecycleStatus", e->>'industry',
                (e->>'employeeCount')::int, e->>'domain', e->>'externalId', $3::timestamptz AT TIME ZONE 'UTC', $3::timestamptz AT TIME ZONE 'UTC'
         FROM jsonb_array_elements($2::jsonb) AS e
         ON CONFLICT ("orgId", "externalId") DO NOTHING
         RETURNING "id", "externalId"`,
        orgId,
        JSON.stringify(pending.map((p) => p.row)),
        now,
      );
      const createdIds = new Set(inserted.map((row) => row.id));
      for (const p of pending) if (createdIds.has(p.row.id)) outcome.set(p.index, { id: p.row.id, action: "created" });
      const conflicting = pending.filter((p) => !createdIds.has(p.row.id));
      pending = [];
      if (conflicting.length === 0) break;

      const updated = await tx.$queryRawUnsafe<BulkRow[]>(
        `UPDATE "Account" AS a SET
           "name" = n."name", "lifecycleStatus" = n."lifecycleStatus", "industry" = n."industry",
           "employeeCount" = n."employeeCount", "domain" = n."domain",
           "updatedAt" = CASE WHEN (a."name", a."lifecycleStatus", a."industry", a."employeeCount", a."domain")
                                    IS DISTINCT FROM (n."name", n."lifecycleStatus", n."industry", n."employeeCount", n."domain")
                              THEN $3::timestamptz AT TIME ZONE 'UTC' ELSE a."updatedAt" END
         FROM (
           SELECT c."id",
                  e->>'name' AS "name",
                  CASE WHEN e ? 'lifecycleStatus' THEN (e->>'lifecycleStatus')::"LifecycleStatus" ELSE c."lifecycleStatus" END AS "lifecycleStatus",
                  CASE WHEN e ? 'industry' THEN e->>'industry' ELSE c."industry" END AS "industry",
                  CASE WHEN e ? 'employeeCount' THEN (e->>'employeeCount')::int ELSE c."employeeCount" END AS "employeeCount",
                  CASE WHEN e ? 'domain' THEN e->>'domain' ELSE c."domain" END AS "domain"
           FROM jsonb_array_elements($2::jsonb) AS e
           JOIN "Account" AS c ON c."orgId" = $1 AND c."externalId" = e->>'externalId'
         ) AS n
         WHERE a."id" = n."id"
         RETURNING a."id", a."externalId", a."updatedAt" = $3::timestamptz AT TIME ZONE 'UTC' AS "changed"`,
        orgId,
        JSON.stringify(conflicting.map((p) => p.row)),
        now,
      );
      for (const row of updated) if (row.changed) changedIds.push(row.id);
      const byExternalId = new Map(updated.map((row) => [row.externalId, row.id]));
      for (const p of conflicting) {
        const id = byExternalId.get(p.row.externalId ?? null);
        if (id) outcome.set(p.index, { id, action: "updated" });
        else pending.push(p);
      }
    }
    if (pending.length > 0) throw new Error("bulk upsert did not settle after 3 passes");

    const createdIds = [...outcome.values()].filter((o) => o.action === "created").map((o) => o.id);
    await recordNewAccountScores(orgId, createdIds, new Date(now));
    const touched = await tx.account.findMany({
      where: { orgId, id: { in: [...createdIds, ...changedIds] } },
      select: accountSelect,
    });
    const created = new Set(createdIds);
    await recordEvents(
      tx,
      orgId,
      origin,
      touched.map((row) => ({
        name: created.has(row.id) ? "account.created" : "account.updated",
        data: toAccount(row),
        before: created.has(row.id) ? undefined : before.get(row.id),
      })),
    );
  });

  const results = rows.map((row, index) => {
    const result = outcome.get(index);
    if (!result) throw new Error(`bulk item ${index} has no outcome`);
    return { externalId: row.externalId ?? null, ...result };
  });
  const created = results.filter((r) => r.action === "created").length;
  return { created, updated: results.length - created, total: results.length, results };
}
