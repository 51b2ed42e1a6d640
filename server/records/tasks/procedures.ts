import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { DeletedSchema } from "../accounts/schema";
import { CUSTOM_FIELD_LIST_TEXT } from "../custom-fields/schema";
import { TaskCreateSchema, TaskListQuerySchema, TaskListSchema, TaskSchema, TaskUpdateSchema } from "./schema";
import { createTask, deleteTask, getTask, listTasks, updateTask } from "./service";

const tags = ["Tasks"];

const LINK_RULE =
  "accountId and dealId must name records of the caller's organisation, and when a task has both, the deal must belong to that account; otherwise 422 validation_error on the field and nothing is written. Creating, changing and deleting a task record task.created, task.updated and task.deleted in the events feed, and webhook endpoints can subscribe to them.";

/**
 * Tasks endpoints (docs/api-contract.md §4.5, §3). Errors: 401, 403, 404, 400, 422 as documented per operation in
 * OpenAPI.
 */
export const tasksRouter = router({
  /** `GET /tasks` (tasks:read): a keyset page; filters `status`, `assigneeId`, `accountId`, `dealId`, `updatedAfter`. */
  list: apiProcedure("tasks:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/tasks",
        tags,
        summary: "List tasks",
        description: `Keyset-paginated tasks of the organisation. Filters combine with AND. Sort allow-list: dueAt, createdAt, updatedAt; default createdAt:asc, ties by id; tasks without dueAt sort last in both directions. priority is not sortable. ${CUSTOM_FIELD_LIST_TEXT}`,
      },
      envelope: "list",
    })
    .input(TaskListQuerySchema)
    .output(TaskListSchema)
    .query(({ ctx, input }) => listTasks(ctx.principal.orgId, input)),

  /** `POST /tasks` (tasks:write): creates a task, 201. */
  create: apiProcedure("tasks:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/tasks",
        tags,
        summary: "Create a task",
        description: `Creates a task. Defaults: status TODO, priority MEDIUM. A task created as DONE gets completedAt = now; completedAt is read-only. ${LINK_RULE}`,
      },
      successStatus: 201,
    })
    .input(TaskCreateSchema)
    .output(TaskSchema)
    .mutation(({ ctx, input }) => createTask(ctx.principal.orgId, input, ctx.principal)),

  /** `GET /tasks/{id}` (tasks:read). */
  get: apiProcedure("tasks:read")
    .meta({ openapi: { method: "GET", path: "/tasks/{id}", tags, summary: "Get a task" } })
    .input(z.strictObject({ id: IdSchema }))
    .output(TaskSchema)
    .query(({ ctx, input }) => getTask(ctx.principal.orgId, input.id)),

  /** `PATCH /tasks/{id}` (tasks:write): partial update; status DONE stamps `completedAt` (docs/api-contract.md §3). */
  update: apiProcedure("tasks:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/tasks/{id}",
        tags,
        summary: "Update a task",
        description: `Partial update; null clears an optional field. Any status may be set from any status. Setting status DONE stamps completedAt with the current time; moving from DONE to another status clears it. When accountId or dealId changes, the links are checked against the values the task will have after the update (a later move of the deal to another account does not touch its tasks). A PATCH that changes nothing leaves updatedAt as it was. ${LINK_RULE}`,
      },
    })
    .input(TaskUpdateSchema)
    .output(TaskSchema)
    .mutation(({ ctx, input }) => updateTask(ctx.principal.orgId, input, ctx.principal)),

  /** `DELETE /tasks/{id}` (tasks:write): hard delete. */
  delete: apiProcedure("tasks:write")
    .meta({
      openapi: {
        method: "DELETE",
        path: "/tasks/{id}",
        tags,
        summary: "Delete a task",
        description:
          "Removes the task for good (there is no soft delete for tasks) and returns { id, deleted: true }. A second delete answers 404. Records task.deleted with the task's tombstone.",
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(DeletedSchema)
    .mutation(({ ctx, input }) => deleteTask(ctx.principal.orgId, input.id, ctx.principal)),
});
