import { z } from "zod";
import { IdSchema } from "../../contract/common";
import { apiProcedure, router } from "../../trpc";
import { NoteCreateSchema, NoteListQuerySchema, NoteListSchema, NoteSchema } from "./schema";
import { createNote, getNote, listNotes } from "./service";

const tags = ["Notes"];

/**
 * Notes endpoints (docs/api-contract.md §4.6). Notes are append-only here: the contract defines no update or delete.
 * Errors: 400 `bad_request`/`invalid_json`, 401 `unauthorized`, 403 `insufficient_scope`, 404 `not_found`,
 * 422 `validation_error`, as documented per operation in OpenAPI.
 */
export const notesRouter = router({
  /** `GET /notes` (notes:read): a keyset page; filters `objectType`, `objectId`, `updatedAfter`. */
  list: apiProcedure("notes:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/notes",
        tags,
        summary: "List notes",
        description:
          "Keyset-paginated notes of the organisation, oldest first by default. Sort allow-list: createdAt, updatedAt. Filter objectType and objectId together for the notes of one record; an objectId naming no record gives an empty page.",
      },
      envelope: "list",
    })
    .input(NoteListQuerySchema)
    .output(NoteListSchema)
    .query(({ ctx, input }) => listNotes(ctx.principal.orgId, input)),

  /** `POST /notes` (notes:write): creates a note on an Account, Deal, Contract or Lead, 201. */
  create: apiProcedure("notes:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/notes",
        tags,
        summary: "Create a note",
        description:
          "Attaches a note to an Account, Deal, Contract or Lead. objectId must be a record of that objectType in the organisation, otherwise 422 on objectId and nothing is created. body is 1 to 10,000 characters, not only white space, stored as sent. authorId is an optional free identifier of the author in the caller's system. Records note.created in the events feed.",
      },
      successStatus: 201,
    })
    .input(NoteCreateSchema)
    .output(NoteSchema)
    .mutation(({ ctx, input }) => createNote(ctx.principal.orgId, input, ctx.principal)),

  /** `GET /notes/{id}` (notes:read). */
  get: apiProcedure("notes:read")
    .meta({
      openapi: {
        method: "GET",
        path: "/notes/{id}",
        tags,
        summary: "Get a note",
        description: "Not in the contract's endpoint table; added so that a created note can be read back by its id.",
      },
    })
    .input(z.strictObject({ id: IdSchema }))
    .output(NoteSchema)
    .query(({ ctx, input }) => getNote(ctx.principal.orgId, input.id)),
});
