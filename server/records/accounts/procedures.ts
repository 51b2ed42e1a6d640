import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { runBulk } from "../bulk";
import { PARTIAL_MODE, PartialBulkResultSchema } from "../bulk.schema";
import { CUSTOM_FIELD_LIST_TEXT } from "../custom-fields/schema";
import {
  type AccountBulkResult,
  AccountBulkResultSchema,
  AccountBulkSchema,
  type AccountCreate,
  AccountCreateSchema,
  AccountDeleteSchema,
  AccountListQuerySchema,
  AccountListSchema,
  AccountSchema,
  AccountUpdateSchema,
  DeletedSchema,
} from "./schema";
import { bulkUpsertAccounts, createAccount, deleteAccount, getAccount, listAccounts, updateAccount } from "./service";

const tags = ["Accounts"];

/**
 * Accounts endpoints (docs/api-contract.md §4.1, §3). Errors: 401, 403, 404, 400, 422 as documented per operation in
 * OpenAPI.
 */
export const accountsRouter = router({
  /** `GET /accounts` (accounts:read): a keyset page, filters `lifecycle`, `industry`, `updatedAfter`, `sort`. */
  list: apiProcedure("accounts:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/accounts",
        tags,
        summary: "List accounts",
        description: `Keyset-paginated accounts of the organisation. Filters combine with AND. ${CUSTOM_FIELD_LIST_TEXT}`,
      },
      envelope: "list",
    })
    .input(AccountListQuerySchema)
    .output(AccountListSchema)
    .query(({ ctx, input }) => listAccounts(ctx.principal.orgId, input)),

  /** `POST /accounts` (accounts:write): creates an account, 201. */
  create: apiProcedure("accounts:write")
    .meta({
      openapi: { method: "POST", path: "/accounts", tags, summary: "Create an account" },
      successStatus: 201,
    })
    .input(AccountCreateSchema)
    .output(AccountSchema)
    .mutation(({ ctx, input }) => createAccount(ctx.principal.orgId, input, ctx.principal)),

  /** `POST /accounts/bulk` (accounts:write): upserts up to 500 accounts matched on externalId. */
  bulk: apiProcedure("accounts:write")
    .meta({
      expensive: "bulk",
      openapi: {
        method: "POST",
        path: "/accounts/bulk",
        tags,
        summary: "Bulk upsert accounts",
        description: `Creates or updates up to 500 accounts in one transaction, matched on externalId within the organisation. Answers 200 with one result per item in request order; nothing is written when any item is invalid. ${PARTIAL_MODE}`,
      },
      partialStatus: 207,
      query: ["mode"],
    })
    .input(AccountBulkSchema)
    .output(z.union([AccountBulkResultSchema, PartialBulkResultSchema]))
    .mutation(({ ctx, input }) =>
      runBulk<AccountCreate, AccountBulkResult>({
        list: "accounts",
        mode: input.mode,
        items: input.accounts,
        run: (valid) => bulkUpsertAccounts(ctx.principal.orgId, valid, ctx.principal),
        outcomes: (r) => r.results.map((x) => ({ id: x.id, status: x.action })),
      }),
    ),

  /** `GET /accounts/{id}` (accounts:read). */
  get: apiProcedure("accounts:read")
    .meta({ openapi: { method: "GET", path: "/accounts/{id}", tags, summary: "Get an account" } })
    .input(z.strictObject({ id: IdSchema }))
    .output(AccountSchema)
    .query(({ ctx, input }) => getAccount(ctx.principal.orgId, input.id)),

  /** `PATCH /accounts/{id}` (accounts:write): partial update. */
  update: apiProcedure("accounts:write")
    .meta({ openapi: { method: "PATCH", path: "/accounts/{id}", tags, summary: "Update an account" } })
    .input(AccountUpdateSchema)
    .output(AccountSchema)
    .mutation(({ ctx, input }) => updateAccount(ctx.principal.orgId, input, ctx.principal)),

  /** `DELETE /accounts/{id}` (accounts:write): soft delete (CHURNED), or hard delete with `force=true`. */
  delete: apiProcedure("accounts:write")
    .meta({
      openapi: {
        method: "DELETE",
        path: "/accounts/{id}",
        tags,
        summary: "Delete an account",
        description:
          "Without force the account is soft-deleted: lifecycleStatus becomes CHURNED, the churned account is returned and account.deleted carries it. With force=true the record is removed with its deals, devices, touchpoints, contact links and notes, and { id, deleted: true } is returned; the events feed then records a tombstone for every removed record (note, touchpoint, device, deal), task.updated for tasks that lose the link, contact.updated for contacts that lose the relationship, and finally account.deleted with the account's tombstone {id, resource, deleted: true, externalId}.",
      },
    })
    .input(AccountDeleteSchema)
    .output(z.union([AccountSchema, DeletedSchema]))
    .mutation(({ ctx, input }) => deleteAccount(ctx.principal.orgId, input.id, input.force === true, ctx.principal)),
});
