import type { Prisma } from "../db/generated/client";
import { prisma, transaction } from "../db/transaction";
import { ApiError, notFound } from "../errors";
import { NOTE_DEFAULT_SORT, NOTE_SORT_FIELDS, type Note, type NoteCreate, type NoteListQuery } from "../schemas/notes";
import { listPage } from "./pagination";

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

/** Table and wording of each object type a note can be attached to (spec §2.8). */
const NOTE_TARGETS = {
  Account: { table: "Account", thing: "account" },
  Deal: { table: "Deal", thing: "deal" },
  Contract: { table: "Contract", thing: "contract" },
  Lead: { table: "Lead", thing: "lead" },
} as const satisfies Record<Note["objectType"], { table: string; thing: string }>;

/** Serialises a note row exactly as `GET /notes/{id}` returns it (spec §2.8). */
export function toNote(row: NoteRow): Note {
  return { ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}

/**
 * Lists an organisation's notes, one keyset page at a time (spec §4.6, §4.9); filters `objectType`, `objectId`,
 * `updatedAfter`; sort allow-list `createdAt`, `updatedAt`.
 * @returns `{ data: Note[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no note of the organisation.
 */
export function listNotes(orgId: string, query: NoteListQuery) {
  const filters: Prisma.NoteWhereInput[] = [{ orgId }];
  if (query.objectType) filters.push({ objectType: query.objectType });
  if (query.objectId) filters.push({ objectId: query.objectId });
  return listPage({
    query,
    fields: NOTE_SORT_FIELDS,
    defaultSort: NOTE_DEFAULT_SORT,
    filters,
    findCursor: (id) => prisma().note.findFirst({ where: { orgId, id }, select: noteSelect }),
    findMany: (args) => prisma().note.findMany({ ...(args as Prisma.NoteFindManyArgs), select: noteSelect }),
    map: toNote,
  });
}

/**
 * Returns one note of the organisation (issue #3: added next to the spec's list and create).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (spec §1).
 */
export async function getNote(orgId: string, id: string): Promise<Note> {
  const row = await prisma().note.findFirst({ where: { orgId, id }, select: noteSelect });
  if (!row) throw notFound("Note", id);
  return toNote(row);
}

/**
 * Creates a note on an Account, Deal, Contract or Lead of the organisation (spec §4.6). The target is key-share
 * locked while the note is written, so it cannot be deleted in between. Spec §6.1 has no note events: none is recorded.
 * @throws ApiError `validation_error` (422) when `objectId` is not a record of `objectType` in the organisation.
 */
export async function createNote(orgId: string, input: NoteCreate): Promise<Note> {
  const target = NOTE_TARGETS[input.objectType];
  return transaction(async (tx) => {
    // The table name comes from the fixed map above, never from the request.
    const found = await tx.$queryRawUnsafe<unknown[]>(
      `SELECT 1 FROM "${target.table}" WHERE "orgId" = $1 AND "id" = $2 FOR KEY SHARE`,
      orgId,
      input.objectId,
    );
    if (found.length === 0) {
      throw new ApiError("validation_error", `No ${target.thing} ${input.objectId} in the organisation`, {
        details: [{ path: ["objectId"], message: `no ${target.thing} with this id in the organisation` }],
      });
    }
    return toNote(await tx.note.create({ data: { ...input, orgId }, select: noteSelect }));
  });
}
