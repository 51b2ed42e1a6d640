import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { transaction } from "../../db/transaction";
import { ApiError, notFound } from "../../errors";
import type { CustomFieldValues } from "../custom-fields/schema";
import { recordEvents, tombstone, type WriteOrigin } from "../events";
import { defineResource, equalTo, lockReferences, type Reference } from "../resource";
import {
  TASK_DEFAULT_SORT,
  TASK_DEFAULTS,
  TASK_FILTERS,
  TASK_SORT_FIELDS,
  type Task,
  type TaskCreate,
  type TaskListQuery,
  type TaskUpdate,
} from "./schema";

const taskSelect = {
  id: true,
  title: true,
  description: true,
  status: true,
  priority: true,
  dueAt: true,
  assigneeId: true,
  accountId: true,
  dealId: true,
  completedAt: true,
  customFields: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.TaskSelect;

type TaskRow = Prisma.TaskGetPayload<{ select: typeof taskSelect }>;

/**
 * Serialises a task row exactly as `GET /tasks/{id}` returns it (docs/api-contract.md §2.7): timestamps as ISO 8601 UTC
 * strings.
 */
export function toTask(row: TaskRow): Task {
  return {
    ...row,
    dueAt: row.dueAt ? row.dueAt.toISOString() : null,
    completedAt: row.completedAt ? row.completedAt.toISOString() : null,
    customFields: row.customFields as CustomFieldValues,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

// Inputs carry any time-zone offset; comparing and storing the UTC form keeps no-op detection exact.
function normaliseTimestamp(value: string | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}

/**
 * Checks the task's links (docs/api-contract.md §2.7) and holds a key-share lock on the linked account and deal until
 * the transaction ends, so neither can be deleted between the check and the write. `links` are the values the task will
 * have; `sent` the fields the request carried, where a mismatch is reported.
 * @throws ApiError `validation_error` (422) when `accountId` or `dealId` names no record of the organisation, or when
 *         the deal belongs to another account than `accountId`.
 */
async function checkLinks(
  orgId: string,
  links: { accountId: string | null; dealId: string | null },
  sent: { accountId: boolean; dealId: boolean },
): Promise<void> {
  const refs: Reference[] = [];
  if (links.accountId) refs.push({ table: "Account", id: links.accountId, path: ["accountId"] });
  if (links.dealId) refs.push({ table: "Deal", id: links.dealId, path: ["dealId"] });
  const found = await lockReferences(orgId, refs);
  const dealAccount = links.dealId ? found.get(`Deal:${links.dealId}`)?.accountId : undefined;
  if (links.accountId && dealAccount && dealAccount !== links.accountId) {
    throw new ApiError("validation_error", "The task's deal belongs to another account", {
      details: [
        {
          path: [sent.dealId || !sent.accountId ? "dealId" : "accountId"],
          message: "the deal belongs to another account than the task's accountId",
        },
      ],
    });
  }
}

const tasks = defineResource<TaskRow, Task>({
  table: "Task",
  noun: "Task",
  select: taskSelect,
  serialise: toTask,
  writable: {
    title: { type: "text" },
    description: { type: "text" },
    status: { type: { enum: "TaskStatus" }, default: `'${TASK_DEFAULTS.status}'` },
    priority: { type: { enum: "TaskPriority" }, default: `'${TASK_DEFAULTS.priority}'` },
    dueAt: { type: "timestamp" },
    assigneeId: { type: "text" },
    accountId: { type: "text" },
    dealId: { type: "text" },
    completedAt: { type: "timestamp" },
  },
  customFields: "task",
});

/**
 * Inserts new tasks as `POST /tasks` and the demo seed create them (ids and timestamps stamped here; status and
 * priority default to TODO and MEDIUM; a task created as DONE was completed at `now`).
 * @returns the created tasks as `GET /tasks/{id}` returns them, in no particular order.
 */
export async function insertTasks(orgId: string, items: readonly TaskCreate[], now: Date): Promise<Task[]> {
  const rows = items.map((item) => ({
    ...item,
    id: newId(),
    dueAt: normaliseTimestamp(item.dueAt ?? null),
    completedAt: (item.status ?? TASK_DEFAULTS.status) === "DONE" ? now.toISOString() : null,
  }));
  return (await tasks.insert(orgId, rows, now)).map(toTask);
}

/**
 * Lists an organisation's tasks, one keyset page at a time (docs/api-contract.md §4.5, §4.9); filters `status`,
 * `assigneeId`, `accountId`, `dealId`, `updatedAfter`.
 * @returns `{ data: Task[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no task of the organisation.
 */
export function listTasks(orgId: string, query: TaskListQuery) {
  return tasks.list(orgId, query, {
    sortable: TASK_SORT_FIELDS,
    defaultSort: TASK_DEFAULT_SORT,
    filters: TASK_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["accountId", "dealId", "dueAt", "createdAt", "updatedAt"],
    terms: [
      ...equalTo("status", query.status),
      ...equalTo("assigneeId", query.assigneeId),
      ...equalTo("accountId", query.accountId),
      ...equalTo("dealId", query.dealId),
    ],
  });
}

/**
 * Returns one task of the organisation (docs/api-contract.md §4.5).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getTask(orgId: string, id: string): Promise<Task> {
  return tasks.get(orgId, id);
}

/**
 * Creates a task (docs/api-contract.md §4.5); status defaults to TODO, priority to MEDIUM; a task created as DONE gets
 * `completedAt` = now. Records `task.created` (the events feed carries tasks).
 * @throws ApiError `validation_error` (422) when `accountId`/`dealId` names no record of the organisation or the deal
 *         belongs to another account than `accountId`.
 */
export async function createTask(orgId: string, input: TaskCreate, origin: WriteOrigin): Promise<Task> {
  const links = { accountId: input.accountId ?? null, dealId: input.dealId ?? null };
  return transaction(async (tx) => {
    await checkLinks(orgId, links, { accountId: input.accountId != null, dealId: input.dealId != null });
    const [task] = (await insertTasks(orgId, [input], new Date())) as [Task];
    await recordEvents(tx, orgId, origin, [{ name: "task.created", data: task }]);
    return task;
  });
}

/**
 * Applies the given fields to a task (docs/api-contract.md §4.5, §3): a status change to DONE stamps `completedAt` with
 * the current time, a change away from DONE clears it. When `accountId` or `dealId` changes, the links are checked as
 * on create against the values the task will have. A request that changes nothing leaves `updatedAt` as it was and
 * records nothing; a change records `task.updated`.
 * @throws ApiError `not_found` (404); `validation_error` (422) for unusable `accountId`/`dealId`.
 */
export async function updateTask(orgId: string, input: TaskUpdate, origin: WriteOrigin): Promise<Task> {
  const { id, ...fields } = input;
  return transaction(async (tx) => {
    const current = await tasks.lock(orgId, id);
    const wanted = { ...fields };
    if (wanted.dueAt !== undefined) wanted.dueAt = normaliseTimestamp(wanted.dueAt);
    const changes = await tasks.changes(orgId, current, wanted);
    if (Object.keys(changes).length === 0) return current;

    if (changes.accountId !== undefined || changes.dealId !== undefined) {
      await checkLinks(
        orgId,
        {
          accountId: changes.accountId !== undefined ? changes.accountId : current.accountId,
          dealId: changes.dealId !== undefined ? changes.dealId : current.dealId,
        },
        { accountId: changes.accountId !== undefined, dealId: changes.dealId !== undefined },
      );
    }
    // One clock for both, so completedAt equals the updatedAt of the change that completed the task.
    const now = new Date();
    const data = {
      ...changes,
      ...(changes.status ? { completedAt: changes.status === "DONE" ? now.toISOString() : null } : {}),
    };
    const task = toTask((await tasks.update(orgId, current, data, now)) as TaskRow);
    await recordEvents(tx, orgId, origin, [{ name: "task.updated", data: task, before: current }]);
    return task;
  });
}

/**
 * Deletes a task for good (docs/api-contract.md §4.5: hard delete) and records `task.deleted` with its tombstone.
 * @returns `{ id, deleted: true }`
 * @throws ApiError `not_found` (404) when missing or owned by another organisation.
 */
export async function deleteTask(
  orgId: string,
  id: string,
  origin: WriteOrigin,
): Promise<{ id: string; deleted: true }> {
  return transaction(async (tx) => {
    const { count } = await tx.task.deleteMany({ where: { orgId, id } });
    if (count === 0) throw notFound("Task", id);
    await recordEvents(tx, orgId, origin, [{ name: "task.deleted", data: tombstone("task", id) }]);
    return { id, deleted: true as const };
  });
}
