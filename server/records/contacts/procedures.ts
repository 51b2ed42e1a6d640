import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { runBulk } from "../bulk";
import { PARTIAL_MODE, PartialBulkResultSchema } from "../bulk.schema";
import { CUSTOM_FIELD_LIST_TEXT } from "../custom-fields/schema";
import { ContactErasureSchema } from "../erasure/schema";
import { eraseContact } from "../erasure/service";
import {
  type ContactBulkResult,
  ContactBulkResultSchema,
  ContactBulkSchema,
  type ContactCreate,
  ContactCreateSchema,
  ContactListQuerySchema,
  ContactListSchema,
  ContactSchema,
  ContactUpdateSchema,
} from "./schema";
import { bulkUpsertContacts, createContact, getContact, listContacts, updateContact } from "./service";

const tags = ["Contacts"];

const SHAPE =
  "A contact is returned with its account relationships (accounts: [{accountId, accountName, role, isPrimary}], the primary one first, then by account name); list items, bulk events and the contact.created / contact.updated webhook data have exactly this shape.";

/**
 * Contacts endpoints (docs/api-contract.md §4.2, §2.4, §6.1, §4.16): list, create, get, update, bulk upsert and erasure.
 * Errors: 401,
 * 403, 404, 400, 422 as documented per operation in OpenAPI.
 */
export const contactsRouter = router({
  /** `GET /contacts` (contacts:read): a keyset page, filters `accountId`, `email`, `updatedAfter`, `sort`. */
  list: apiProcedure("contacts:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/contacts",
        tags,
        summary: "List contacts",
        description: `${SHAPE} Filters: accountId (contacts related to that account; an id that names no account of the organisation gives an empty list, not an error) and email (exact, case-insensitive). Sort fields: createdAt, updatedAt, email (case-insensitive order), lastName (nulls last); default createdAt:asc. ${CUSTOM_FIELD_LIST_TEXT}`,
      },
      envelope: "list",
    })
    .input(ContactListQuerySchema)
    .output(ContactListSchema)
    .query(({ ctx, input }) => listContacts(ctx.principal.orgId, input)),

  /** `POST /contacts` (contacts:write): creates a contact, optionally related to an account, 201. */
  create: apiProcedure("contacts:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/contacts",
        tags,
        summary: "Create a contact",
        description: `Creates a contact; email is required and unique per organisation compared case-insensitively (a clash is 422 validation_error on email). accountId (with optional role and isPrimary, default false) makes its first account relationship; an accountId that names no account of the organisation is 422 on accountId and nothing is created. ${SHAPE} Records contact.created.`,
      },
      successStatus: 201,
    })
    .input(ContactCreateSchema)
    .output(ContactSchema)
    .mutation(({ ctx, input }) => createContact(ctx.principal.orgId, input, ctx.principal)),

  /** `POST /contacts/bulk` (contacts:write): upserts up to 500 contacts matched on email, case-insensitively. */
  bulk: apiProcedure("contacts:write")
    .meta({
      expensive: "bulk",
      openapi: {
        method: "POST",
        path: "/contacts/bulk",
        tags,
        summary: "Bulk upsert contacts",
        description: `Creates or updates up to 500 contacts in one transaction, matched on email compared case-insensitively within the organisation. An item may carry accountId (with role, isPrimary) to add that relationship when missing or adjust it when present; bulk never removes relationships. Answers 200 with one result per item in request order; nothing is written when any item is invalid, an email repeats within the request (case-insensitively) or an accountId names no account of the organisation. Records contact.created per created contact and contact.updated per contact whose fields or relationships changed. ${PARTIAL_MODE}`,
      },
      partialStatus: 207,
      query: ["mode"],
    })
    .input(ContactBulkSchema)
    .output(z.union([ContactBulkResultSchema, PartialBulkResultSchema]))
    .mutation(({ ctx, input }) =>
      runBulk<ContactCreate, ContactBulkResult>({
        list: "contacts",
        mode: input.mode,
        items: input.contacts,
        run: (valid) => bulkUpsertContacts(ctx.principal.orgId, valid, ctx.principal),
        outcomes: (r) => r.results.map((x) => ({ id: x.id, status: x.action })),
      }),
    ),

  /** `GET /contacts/{id}` (contacts:read): the contact with its account relationships. */
  get: apiProcedure("contacts:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/contacts/{id}",
        tags,
        summary: "Get a contact with its account relationships",
        description: SHAPE,
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(ContactSchema)
    .query(({ ctx, input }) => getContact(ctx.principal.orgId, input.id)),

  /** `PATCH /contacts/{id}` (contacts:write): partial update; `accounts` replaces the relationships. */
  update: apiProcedure("contacts:write")
    .meta({
      openapi: {
        method: "PATCH",
        path: "/contacts/{id}",
        tags,
        summary: "Update a contact",
        description: `Partial update: fields left out keep their values, null clears firstName, lastName, title or phone. accounts, when given, is the contact's complete set of account relationships and replaces it (relationships not listed are removed; [] removes all; role and isPrimary left out become null and false); each accountId at most once, at most one isPrimary true, and every accountId must name an account of the organisation (422 otherwise). A change of a field or of the relationships moves updatedAt and records contact.updated; a request that changes nothing changes nothing. ${SHAPE}`,
      },
    })
    .input(ContactUpdateSchema)
    .output(ContactSchema)
    .mutation(({ ctx, input }) => updateContact(ctx.principal.orgId, input, ctx.principal)),

  /**
   * `POST /contacts/{id}/erase` (contacts:write): erases a person (docs/api-contract.md §4.16): removes the contact and
   * its links, redacts its personal data in stored events, delivery attempts, audit-log queries and idempotent answers,
   * records `contact.erased` (tombstone). 200 with the counts; 404 when unknown, already erased or another
   * organisation's.
   */
  erase: apiProcedure("contacts:write")
    .meta({
      ownTransactions: true,
      expensive: "erasure",
      openapi: {
        method: "POST",
        path: "/contacts/{id}/erase",
        tags,
        summary: "Erase a contact (right to erasure)",
        description:
          'Erases the person the contact is, in one transaction: the contact and its account relationships are removed, touchpoints that named it keep their rows with contactId null, and its personal data is redacted where the service stored copies of it, rows kept and values replaced by "[erased]": stored events (the events feed and the payload of every later webhook attempt or redelivery), delivery attempts\' stored answers and errors, the API audit log\'s query strings and stored idempotent answers. The contact\'s own events lose its personal fields (email, names, title, phone, relationship roles); in any other stored text each email, phone number and full name the contact ever had is replaced where it appears as a word. Records contact.erased with a tombstone {id, resource: "contact", deleted: true}. Answers 200 with the rows removed and redacted per store. Copies already delivered to webhook receivers, backups and logs shipped elsewhere are out of its reach. A second erasure of the same id is 404 not_found.',
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(ContactErasureSchema)
    .mutation(({ ctx, input }) => eraseContact(ctx.principal.orgId, input.id, ctx.principal)),
});
