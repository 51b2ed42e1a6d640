import { z } from "zod";
import { IdSchema, ListQueryBase, listOf, sortParam, TimestampSchema } from "../../contract/common";
import { NOTE_CREATE_EXAMPLE, NOTE_EXAMPLE } from "../../contract/examples";
import { type FilterTable, filterParams } from "../filters.schema";

/** Sortable note fields (docs/api-contract.md §4.9.2: `createdAt`, `updatedAt`). */
export const NOTE_SORT_FIELDS = {
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
} as const;

/** Default note order (docs/api-contract.md §4.9.2: `createdAt:asc`, ties by id). */
export const NOTE_DEFAULT_SORT = [{ field: "createdAt", direction: "asc" }] as const;

/** Maximum length of a note body, in characters. */
export const NOTE_BODY_MAX = 10_000;

/** What a note can be attached to (docs/api-contract.md §2.8), spelled exactly as the contract spells it. */
export const NoteObjectTypeSchema = z
  .enum(["Account", "Deal", "Contract", "Lead"])
  .describe("Kind of record the note is attached to: Account, Deal, Contract or Lead (spelled exactly so).");

/** A note as every note endpoint returns it (docs/api-contract.md §2.8). */
export const NoteSchema = z
  .object({
    id: IdSchema,
    objectType: NoteObjectTypeSchema,
    objectId: IdSchema.describe("Id of the record the note is attached to."),
    body: z.string().max(NOTE_BODY_MAX).describe("Text of the note."),
    authorId: z
      .string()
      .max(255)
      .nullable()
      .describe("Author's identifier in the caller's system; null when not given."),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .meta({ id: "Note", example: NOTE_EXAMPLE });

/** A note as returned by the API. */
export type Note = z.infer<typeof NoteSchema>;

/**
 * Body of `POST /notes` (docs/api-contract.md §4.6): `objectType`, `objectId` and `body` required. Unknown fields are
 * refused (422).
 */
export const NoteCreateSchema = z
  .strictObject({
    objectType: NoteObjectTypeSchema,
    objectId: IdSchema.describe(
      "Id of the record to attach the note to; must be a record of objectType in the organisation.",
    ),
    body: z
      .string()
      .min(1)
      .max(NOTE_BODY_MAX)
      .refine((value) => value.trim().length > 0, { message: "must not be blank" })
      .describe(
        `Text of the note, 1 to ${NOTE_BODY_MAX.toLocaleString("en")} characters, not only white space; stored as sent.`,
      ),
    authorId: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .nullable()
      .describe("Author's identifier in the caller's system (e.g. a user id), up to 255 characters; not checked.")
      .optional(),
  })
  .meta({ id: "NoteCreate", examples: [NOTE_CREATE_EXAMPLE] });

/** A validated note creation body. */
export type NoteCreate = z.infer<typeof NoteCreateSchema>;

/** Filterable fields of `GET /notes` and their kinds (`field[op]=value`, docs/api-contract.md §4.9.3). */
export const NOTE_FILTERS: FilterTable = {
  objectId: "id",
  authorId: "text",
  createdAt: "date",
  updatedAt: "date",
};

/** Query of `GET /notes` (docs/api-contract.md §4.6, §4.9): filters `objectType`, `objectId`, `updatedAfter`. */
export const NoteListQuerySchema = z.strictObject({
  ...ListQueryBase,
  sort: sortParam(Object.keys(NOTE_SORT_FIELDS), "createdAt:asc"),
  objectType: NoteObjectTypeSchema.describe("Only notes attached to this kind of record.").optional(),
  objectId: IdSchema.describe("Only notes attached to the record with this id.").optional(),
  ...filterParams(NOTE_FILTERS),
});

/** A validated note list query. */
export type NoteListQuery = z.infer<typeof NoteListQuerySchema>;

/** A page of notes. */
export const NoteListSchema = listOf(NoteSchema);
