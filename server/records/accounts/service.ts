import { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { type TransactionClient, transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { getContact } from "../contacts/service";
import type { CustomFieldValues } from "../custom-fields/schema";
import { type EventInput, recordEvents, tombstone, type WriteOrigin } from "../events";
import { recordNewAccountScores } from "../health/refresh";
import { defineResource, equalTo, isUniqueViolation, type ListView, type UpsertOutcome } from "../resource";
import { getTask } from "../tasks/service";
import {
  ACCOUNT_DEFAULT_SORT,
  ACCOUNT_FILTERS,
  ACCOUNT_SORT_FIELDS,
  type Account,
  type AccountBulkResult,
  type AccountCreate,
  type AccountListQuery,
  type AccountUpdate,
} from "./schema";

const accountSelect = {
  id: true,
  name: true,
  lifecycleStatus: true,
  industry: true,
  employeeCount: true,
  domain: true,
  externalId: true,
  customFields: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.AccountSelect;

type AccountRow = Prisma.AccountGetPayload<{ select: typeof accountSelect }>;

/**
 * Serialises an account row exactly as `GET /accounts/{id}` returns it (docs/api-contract.md §2.3); webhooks reuse it
 * (docs/api-contract.md §6.2).
 */
export function toAccount(row: AccountRow): Account {
  return {
    ...row,
    customFields: row.customFields as CustomFieldValues,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function externalIdTaken(externalId: string): ApiError {
  return new ApiError("validation_error", `externalId ${externalId} is already used by another account`, {
    details: [{ path: ["externalId"], message: "already used by another account of this organisation" }],
  });
}

const accounts = defineResource<AccountRow, Account>({
  table: "Account",
  noun: "Account",
  select: accountSelect,
  serialise: toAccount,
  writable: {
    name: { type: "text" },
    lifecycleStatus: { type: { enum: "LifecycleStatus" }, default: "'PROSPECT'" },
    industry: { type: "text" },
    employeeCount: { type: "int" },
    domain: { type: "text" },
    externalId: { type: "text" },
  },
  match: "externalId",
  customFields: "account",
});

/**
 * The organisation's accounts with these ids, in one query (`expand=account` costs one query a page).
 * @returns id → account as `GET /accounts/{id}` returns it; ids of no account of the organisation are absent.
 */
export function accountsByIds(orgId: string, ids: readonly string[]): Promise<Map<string, Account>> {
  return accounts.many(orgId, ids);
}

/** How the accounts list reads its query (docs/api-contract.md §4.1, §4.9). */
function accountListView(query: AccountListQuery): ListView {
  return {
    sortable: ACCOUNT_SORT_FIELDS,
    defaultSort: ACCOUNT_DEFAULT_SORT,
    filters: ACCOUNT_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["lifecycleStatus", "employeeCount", "externalId", "createdAt", "updatedAt"],
    terms: [...equalTo("lifecycleStatus", query.lifecycle), ...equalTo("industry", query.industry, "text")],
  };
}

/**
 * Lists an organisation's accounts, one keyset page at a time (docs/api-contract.md §4.1, §4.9), and structured
 * search's pages (§4.18).
 * @returns `{ data: Account[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no account of the organisation; `validation_error` (422)
 *         for a custom field filter the organisation's fields refuse.
 */
export function listAccounts(orgId: string, query: AccountListQuery) {
  return accounts.list(orgId, query, accountListView(query));
}

/**
 * The SQL statement and parameters {@link listAccounts} runs for `query`, to read its plan with `EXPLAIN`
 * (docs/architecture.md, "Search").
 * @throws ApiError as {@link listAccounts}, for the cursor's lookup and the custom field filters.
 */
export function accountListStatement(orgId: string, query: AccountListQuery) {
  return accounts.listStatement(orgId, query, accountListView(query));
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
export function createAccount(orgId: string, input: AccountCreate, origin: WriteOrigin): Promise<Account> {
  return transaction(async (tx) => {
    const [row] = await accounts.insert(orgId, [{ ...input, id: newId() }], new Date());
    // The insert skips an item whose externalId the organisation already has.
    if (!row) throw externalIdTaken(input.externalId ?? "");
    const account = toAccount(row);
    await recordNewAccountScores(orgId, [account.id], row.createdAt);
    await recordEvents(tx, orgId, origin, [{ name: "account.created", data: account }]);
    return account;
  });
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
      const current = await accounts.lock(orgId, id);
      const changes = await accounts.changes(orgId, current, fields);
      if (Object.keys(changes).length === 0) return current;
      const account = toAccount((await accounts.update(orgId, current, changes, new Date())) as AccountRow);
      await recordEvents(tx, orgId, origin, [{ name: event, data: account, before: current }]);
      return account;
    });
  } catch (error) {
    if (isUniqueViolation(error) && fields.externalId) throw externalIdTaken(fields.externalId);
    throw error;
  }
}

/**
 * Locks the rows of `table` of the organisation that match `condition` (over the row `t`), by ascending id, `FOR
 * UPDATE`: the order every writer that locks several records takes them in (docs/architecture.md, "Erasure of a
 * person").
 * @returns their ids, ascending.
 */
async function lockInOrder(
  tx: TransactionClient,
  table: "Deal" | "Device" | "Task" | "Contact",
  orgId: string,
  condition: Prisma.Sql,
): Promise<string[]> {
  // The table's name comes from this module, never from a request.
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT t."id" FROM ${Prisma.raw(`"${table}"`)} AS t
    WHERE t."orgId" = ${orgId} AND ${condition}
    ORDER BY t."id" FOR UPDATE`;
  return rows.map((row) => row.id);
}

/**
 * Deletes an account (docs/api-contract.md §3, §4.1): soft by default (lifecycleStatus becomes CHURNED, the record
 * stays readable, `account.deleted` is recorded with the churned account); `force` removes the row with its deals,
 * devices, contact links, touchpoints and signals, and the notes on it, its deals and its contracts (tasks keep
 * existing, unlinked). A hard delete records an event for every record it removes or changes, dependents first:
 * `note.deleted`, `touchpoint.deleted`, `device.deleted`, `deal.deleted` (tombstones), `task.updated` for unlinked
 * tasks, `contact.updated` for contacts that lose the link, then `account.deleted` with the account's tombstone. Its
 * locks come in the order an erasure takes them in (docs/architecture.md, "Erasure of a person"): the account, its
 * deals, devices and tasks, then the contacts linked to it, each table by ascending id, and only then the rows it
 * removes, so a concurrent erasure of a linked contact never deadlocks with it.
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
    const account = await accounts.lock(orgId, id);
    const dealIds = await lockInOrder(tx, "Deal", orgId, Prisma.sql`t."accountId" = ${id}`);
    await lockInOrder(tx, "Device", orgId, Prisma.sql`t."accountId" = ${id}`);
    const taskIds = await lockInOrder(
      tx,
      "Task",
      orgId,
      Prisma.sql`(t."accountId" = ${id} OR t."dealId" = ANY(${dealIds}::text[]))`,
    );
    // A contact erased meanwhile is gone by now: it is neither read nor changed.
    const contactIds = await lockInOrder(
      tx,
      "Contact",
      orgId,
      Prisma.sql`t."id" IN (SELECT l."contactId" FROM "ContactAccount" AS l WHERE l."orgId" = ${orgId} AND l."accountId" = ${id})`,
    );
    const owned = { where: { orgId, accountId: id }, select: { id: true } } as const;
    const contractIds = (await tx.contract.findMany(owned)).map((contract) => contract.id);
    const devices = await tx.device.findMany({ ...owned, select: { id: true, rmmAgentId: true } });
    const touchpointIds = (await tx.touchpoint.findMany(owned)).map((touchpoint) => touchpoint.id);
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
    events.push({ name: "account.deleted", data: tombstone("account", id, { externalId: account.externalId }) });
    await recordEvents(tx, orgId, origin, events);
    return { id, deleted: true as const };
  });
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

  const now = new Date();
  const { outcomes } = await transaction(async (tx) => {
    const upserted = await accounts.upsert(
      orgId,
      items.map((item) => ({ ...item, id: newId() })),
      now,
      "accounts",
    );
    const created = upserted.outcomes.filter((o) => o.action === "created").map((o) => o.id);
    await recordNewAccountScores(orgId, created, now);
    await recordEvents(
      tx,
      orgId,
      origin,
      upserted.outcomes.flatMap((o) =>
        o.after
          ? [
              o.action === "created"
                ? { name: "account.created" as const, data: o.after }
                : { name: "account.updated" as const, data: o.after, before: upserted.before.get(o.id) },
            ]
          : [],
      ),
    );
    return upserted;
  });

  const results = items.map((item, index) => {
    const { id, action } = outcomes[index] as UpsertOutcome<Account>;
    return { externalId: item.externalId ?? null, id, action };
  });
  const created = results.filter((r) => r.action === "created").length;
  return { created, updated: results.length - created, total: results.length, results };
}
