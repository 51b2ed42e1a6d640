import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { transaction } from "../../db/transaction";
import { recordEvents, type WriteOrigin } from "../events";
import { defineResource, equalTo, lockReferences } from "../resource";
import {
  NOTE_DEFAULT_SORT,
  NOTE_FILTERS,
  NOTE_SORT_FIELDS,
  type Note,
  type NoteCreate,
  type NoteListQuery,
} from "./schema";

const noteSelect = {
  id: true,
  objectType: true,
  objectId: true,
  body: true,
  authorId: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.NoteSelect;

type NoteRow = Prisma.NoteGetPayload<{ select: typeof noteSelect }>;

/** Serialises a note row exactly as `GET /notes/{id}` returns it (docs/api-contract.md §2.8). */
export function toNote(row: NoteRow): Note {
  return { ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}

const notes = defineResource<NoteRow, Note>({
  table: "Note",
  noun: "Note",
  select: noteSelect,
  serialise: toNote,
  writable: {
    objectType: { type: { enum: "NoteObjectType" } },
    objectId: { type: "text" },
    body: { type: "text" },
    authorId: { type: "text" },
  },
});

/**
 * Inserts notes as `POST /notes` and the demo seed write them (ids and timestamps stamped here).
 * @returns the created notes as `GET /notes/{id}` returns them, in no particular order.
 */
export async function insertNotes(orgId: string, items: readonly NoteCreate[], now: Date): Promise<Note[]> {
  return (
    await notes.insert(
      orgId,
      items.map((item) => ({ ...item, id: newId() })),
      now,
    )
  ).map(toNote);
}

/**
 * Lists an organisation's notes, one keyset page at a time (docs/api-contract.md §4.6, §4.9); filters `objectType`,
 * `objectId`, `updatedAfter`; sort allow-list `createdAt`, `updatedAt`.
 * @returns `{ data: Note[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no note of the organisation.
 */
export function listNotes(orgId: string, query: NoteListQuery) {
  return notes.list(orgId, query, {
    sortable: NOTE_SORT_FIELDS,
    defaultSort: NOTE_DEFAULT_SORT,
    filters: NOTE_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["createdAt", "updatedAt"],
    terms: [...equalTo("objectType", query.objectType), ...equalTo("objectId", query.objectId)],
  });
}

/**
 * Returns one note of the organisation (added next to the contract's list and create).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getNote(orgId: string, id: string): Promise<Note> {
  return notes.get(orgId, id);
}

/**
 * Creates a note on an Account, Deal, Contract or Lead of the organisation (docs/api-contract.md §4.6). The target is
 * key-share locked while the note is written, so it cannot be deleted in between. Records `note.created`.
 * @throws ApiError `validation_error` (422) when `objectId` is not a record of `objectType` in the organisation.
 */
export async function createNote(orgId: string, input: NoteCreate, origin: WriteOrigin): Promise<Note> {
  return transaction(async (tx) => {
    // objectType is one of the referenced tables by its schema (docs/api-contract.md §2.8).
    await lockReferences(orgId, [{ table: input.objectType, id: input.objectId, path: ["objectId"] }]);
    const [note] = (await insertNotes(orgId, [input], new Date())) as [Note];
    await recordEvents(tx, orgId, origin, [{ name: "note.created", data: note }]);
    return note;
  });
}
