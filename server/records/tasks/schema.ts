import { z } from "zod";
import {
  DateTimeInputSchema,
  IdSchema,
  ListQueryBase,
  listOf,
  sortParam,
  TimestampSchema,
} from "../../contract/common";
import { TASK_CREATE_EXAMPLE, TASK_EXAMPLE, TASK_UPDATE_EXAMPLE } from "../../contract/examples";
import { CustomFieldsInputSchema, CustomFieldValuesSchema, withCustomFieldParams } from "../custom-fields/schema";
import { type FilterTable, filterParams } from "../filters.schema";

/** Task statuses (docs/api-contract.md §2.7, §3): entering DONE stamps `completedAt`, leaving DONE clears it. */
export const TaskStatusSchema = z
  .enum(["TODO", "IN_PROGRESS", "WAITING", "DONE", "CANCELLED"])
  .describe("Task status. DONE stamps completedAt; any other status clears it.");

/** Task priorities (docs/api-contract.md §2.7). */
export const TaskPrioritySchema = z.enum(["LOW", "MEDIUM", "HIGH", "URGENT"]).describe("Task priority.");

/** Values a created task takes for the fields its body leaves out. */
export const TASK_DEFAULTS = { status: "TODO", priority: "MEDIUM" } as const;

/**
 * Sortable task fields (docs/api-contract.md §4.9.2: `dueAt`, `createdAt`, `updatedAt`). `dueAt` is nullable: tasks
 * without a due time sort last in both directions. `priority` is not sortable: keyset paging over an enum is not
 * expressible in Prisma.
 */
export const TASK_SORT_FIELDS = {
  dueAt: { nullable: true },
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
} as const;

/** Default task order. */
export const TASK_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

const title = z.string().trim().min(1).max(255).describe("Task title, 1 to 255 characters.");
const description = z.string().max(10_000).nullable().describe("Free-text description, up to 10,000 characters.");
const dueAt = DateTimeInputSchema.nullable().describe(
  "When the task is due: ISO 8601 timestamp with a time zone (Z or ±hh:mm); returned in UTC.",
);
const assigneeId = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .nullable()
  .describe("Identifier of the assignee (a user in the caller's system, up to 255 characters; not checked).");
const accountId = IdSchema.nullable().describe(
  "Id of the related account; must be an account of the organisation (otherwise 422).",
);
const dealId = IdSchema.nullable().describe(
  "Id of the related deal; must be a deal of the organisation (otherwise 422). When the task also has an accountId, the deal must belong to that account.",
);

/** A task as every task endpoint returns it (docs/api-contract.md §2.7). */
export const TaskSchema = z
  .object({
    id: IdSchema,
    title: z.string().max(255).describe("Task title."),
    description: z.string().max(10_000).nullable().describe("Free-text description."),
    status: TaskStatusSchema,
    priority: TaskPrioritySchema,
    dueAt: TimestampSchema.nullable().describe("When the task is due, ISO 8601 UTC; null when it has no due time."),
    assigneeId: z.string().max(255).nullable().describe("Identifier of the assignee."),
    accountId: IdSchema.nullable().describe("Id of the related account, or null."),
    dealId: IdSchema.nullable().describe("Id of the related deal, or null."),
    completedAt: TimestampSchema.nullable().describe(
      "Read-only. When the task became DONE (ISO 8601 UTC); null unless the status is DONE.",
    ),
    customFields: CustomFieldValuesSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ id: "Task", example: TASK_EXAMPLE });

/** A task as returned by the API. */
export type Task = z.infer<typeof TaskSchema>;

/**
 * Body of `POST /tasks` (docs/api-contract.md §4.5): `title` required; unknown fields (e.g. `completedAt`) are refused
 * (422).
 */
export const TaskCreateSchema = z
  .strictObject({
    title,
    description: description.optional(),
    status: TaskStatusSchema.optional().describe(
      `Initial status; default ${TASK_DEFAULTS.status}. DONE stamps completedAt with the creation time.`,
    ),
    priority: TaskPrioritySchema.optional().describe(`Priority; default ${TASK_DEFAULTS.priority}.`),
    dueAt: dueAt.optional(),
    assigneeId: assigneeId.optional(),
    accountId: accountId.optional(),
    dealId: dealId.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ id: "TaskCreate", examples: [TASK_CREATE_EXAMPLE] });

/** A validated task creation body. */
export type TaskCreate = z.infer<typeof TaskCreateSchema>;

/** Body of `PATCH /tasks/{id}`: any subset of the create fields; `null` clears an optional field. */
export const TaskUpdateSchema = z
  .strictObject({
    id: IdSchema,
    title: title.optional(),
    description: description.optional(),
    status: TaskStatusSchema.optional(),
    priority: TaskPrioritySchema.optional(),
    dueAt: dueAt.optional(),
    assigneeId: assigneeId.optional(),
    accountId: accountId.optional(),
    dealId: dealId.optional(),
    customFields: CustomFieldsInputSchema.optional(),
  })
  .meta({ examples: [TASK_UPDATE_EXAMPLE] });

/** A validated task update (path id plus changed fields). */
export type TaskUpdate = z.infer<typeof TaskUpdateSchema>;

/** Filterable fields of `GET /tasks` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const TASK_FILTERS: FilterTable = {
  title: "text",
  status: { enum: TaskStatusSchema.options },
  priority: { enum: TaskPrioritySchema.options },
  assigneeId: "text",
  accountId: "id",
  dealId: "id",
  dueAt: "date",
  completedAt: "date",
  createdAt: "date",
  updatedAt: "date",
};

/** Query of `GET /tasks` (docs/api-contract.md §4.5, §4.9). */
export const TaskListQuerySchema = withCustomFieldParams({
  ...ListQueryBase,
  sort: sortParam(Object.keys(TASK_SORT_FIELDS), "createdAt:asc", true),
  status: TaskStatusSchema.describe("Only tasks with this status.").optional(),
  assigneeId: z
    .string()
    .min(1)
    .max(255)
    .describe("Only tasks of this assignee (exact match).")
    .meta({ example: "user-17" })
    .optional(),
  accountId: IdSchema.describe("Only tasks related to this account.").optional(),
  dealId: IdSchema.describe("Only tasks related to this deal.").optional(),
  ...filterParams(TASK_FILTERS),
});

/** A validated task list query. */
export type TaskListQuery = z.infer<typeof TaskListQuerySchema>;

/** A page of tasks. */
export const TaskListSchema = listOf(TaskSchema);
