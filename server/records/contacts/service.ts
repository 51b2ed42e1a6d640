import type { Prisma } from "../../db/generated/client";
import { newId } from "../../db/ids";
import { transaction } from "../../db/transaction";
import { ApiError, type ErrorDetail } from "../../errors";
import type { CustomFieldValues } from "../custom-fields/schema";
import { recordEvents, type WriteOrigin } from "../events";
import type { SortableFields } from "../pagination";
import { defineResource, equalTo, isUniqueViolation, lockReferences, type UpsertOutcome } from "../resource";
import {
  CONTACT_ACCOUNTS_MAX,
  CONTACT_DEFAULT_SORT,
  CONTACT_FILTERS,
  type Contact,
  type ContactBulkResult,
  type ContactCreate,
  type ContactListQuery,
  type ContactUpdate,
} from "./schema";

const contactColumns = {
  id: true,
  email: true,
  emailKey: true,
  firstName: true,
  lastName: true,
  title: true,
  phone: true,
  customFields: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.ContactSelect;

type ContactRow = Prisma.ContactGetPayload<{ select: typeof contactColumns }> & {
  accounts: Array<{ accountId: string; accountName: string; role: string | null; isPrimary: boolean }>;
};

/**
 * A contact's account relationships as one JSON array, read with the contact: the primary one first, then by account
 * name, then by account id (a stable order keeps GET bodies and event payloads identical for the same state).
 */
const relationships = (contact: string) =>
  `COALESCE((SELECT json_agg(json_build_object('accountId', ca."accountId", 'accountName', a."name", 'role', ca."role",
                                              'isPrimary', ca."isPrimary")
                    ORDER BY ca."isPrimary" DESC, a."name", ca."accountId")
             FROM "ContactAccount" AS ca JOIN "Account" AS a ON a."id" = ca."accountId"
             WHERE ca."contactId" = ${contact}."id"), '[]'::json)`;

/** Sortable contact fields (docs/api-contract.md §4.2): `email` sorts case-insensitively, by its `emailKey`. */
const CONTACT_SORTABLE: SortableFields = {
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
  email: { nullable: false },
  lastName: { nullable: true },
};

/** The case-insensitive identity of an email within an organisation (stored as `Contact.emailKey`). */
export function emailKeyOf(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Serialises a contact row exactly as `GET /contacts/{id}` returns it (docs/api-contract.md §2.4), relationships
 * included; list items and `contact.*` event payloads reuse it (docs/api-contract.md §6.2).
 */
export function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    email: row.email,
    firstName: row.firstName,
    lastName: row.lastName,
    title: row.title,
    phone: row.phone,
    accounts: row.accounts.map((link) => ({
      accountId: link.accountId,
      accountName: link.accountName,
      role: link.role,
      isPrimary: link.isPrimary,
    })),
    customFields: row.customFields as CustomFieldValues,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function emailTaken(email: string, path: string[] = ["email"]): ApiError {
  return new ApiError("validation_error", `email ${email} is already used by another contact`, {
    details: [{ path, message: "already used by another contact of this organisation (compared case-insensitively)" }],
  });
}

const contacts = defineResource<ContactRow, Contact>({
  table: "Contact",
  noun: "Contact",
  select: { ...contactColumns, accounts: relationships },
  serialise: toContact,
  writable: {
    email: { type: "text" },
    emailKey: { type: "text" },
    firstName: { type: "text" },
    lastName: { type: "text" },
    title: { type: "text" },
    phone: { type: "text" },
  },
  match: "emailKey",
  customFields: "contact",
});

/**
 * Lists an organisation's contacts, one keyset page at a time (docs/api-contract.md §4.2, §4.9); each item has its
 * relationships. Filters: `accountId` (contacts related to that account; an unknown one gives an empty page), `email`
 * (exact, case-insensitive), `updatedAfter`; `sort` over `createdAt, updatedAt, email, lastName` (email
 * case-insensitive).
 * @returns `{ data: Contact[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no contact of the organisation.
 */
export function listContacts(orgId: string, query: ContactListQuery) {
  return contacts.list(orgId, query, {
    sortable: CONTACT_SORTABLE,
    columns: { email: "emailKey" },
    defaultSort: CONTACT_DEFAULT_SORT,
    filters: CONTACT_FILTERS,
    // Leading columns (after orgId) of the table's indexes in prisma/schema.prisma.
    indexed: ["createdAt", "updatedAt"],
    terms: equalTo("emailKey", query.email === undefined ? undefined : emailKeyOf(query.email)),
    where: (params) =>
      query.accountId === undefined
        ? []
        : [
            `EXISTS (SELECT 1 FROM "ContactAccount" AS ca
                     WHERE ca."orgId" = $1 AND ca."contactId" = t."id" AND ca."accountId" = ${params.add(query.accountId)})`,
          ],
  });
}

/**
 * Returns one contact of the organisation with its account relationships (docs/api-contract.md §4.2).
 * @throws ApiError `not_found` (404) when missing or owned by another organisation (docs/api-contract.md §1).
 */
export function getContact(orgId: string, id: string): Promise<Contact> {
  return contacts.get(orgId, id);
}

/**
 * Creates a contact (docs/api-contract.md §4.2), with its first account relationship when `accountId` is given (`role`
 * default null, `isPrimary` default false). Records `contact.created` carrying the GET body (docs/api-contract.md
 * §6.1).
 * @throws ApiError `validation_error` (422) when the email is already used in the organisation (compared
 * case-insensitively, path `email`) or `accountId` names no account of the organisation (path `accountId`).
 */
export function createContact(orgId: string, input: ContactCreate, origin: WriteOrigin): Promise<Contact> {
  const { accountId, role, isPrimary, ...fields } = input;
  return transaction(async (tx) => {
    if (accountId) await lockReferences(orgId, [{ table: "Account", id: accountId, path: ["accountId"] }]);
    const id = newId();
    const [row] = await contacts.insert(orgId, [{ ...fields, emailKey: emailKeyOf(fields.email), id }], new Date());
    // The insert skips a contact whose email (compared case-insensitively) the organisation already has.
    if (!row) throw emailTaken(fields.email);
    let contact = toContact(row);
    if (accountId) {
      await tx.contactAccount.create({
        data: { orgId, contactId: id, accountId, role: role ?? null, isPrimary: isPrimary ?? false },
      });
      contact = await contacts.get(orgId, id);
    }
    await recordEvents(tx, orgId, origin, [{ name: "contact.created", data: contact }]);
    return contact;
  });
}

/**
 * Applies a partial update to a contact (docs/api-contract.md §4.2): scalar fields given, and, when `accounts` is
 * given, replaces the contact's relationships with that set (missing ones removed, new ones added, role and isPrimary
 * set as given, left out: null and false). The contact row is locked for the transaction, so concurrent updates cannot
 * leave two primary relationships. A change of a field or of the relationships moves `updatedAt` and records
 * `contact.updated` carrying the GET body (docs/api-contract.md §6.1); a request that changes nothing writes and
 * records nothing.
 * @throws ApiError `not_found` (404); `validation_error` (422) when the email is used by another contact (path `email`)
 * or an `accounts[i].accountId` names no account of the organisation.
 */
export async function updateContact(orgId: string, input: ContactUpdate, origin: WriteOrigin): Promise<Contact> {
  const { id, accounts, ...fields } = input;
  try {
    return await transaction(async (tx) => {
      const current = await contacts.lock(orgId, id);
      const changes = await contacts.changes(orgId, current, fields);
      const data = { ...changes, ...(changes.email !== undefined ? { emailKey: emailKeyOf(changes.email) } : {}) };

      let linksChanged = false;
      if (accounts) {
        await lockReferences(
          orgId,
          accounts.map((link, index) => ({
            table: "Account" as const,
            id: link.accountId,
            path: ["accounts", String(index), "accountId"],
          })),
        );
        const existing = new Map(current.accounts.map((link) => [link.accountId, link]));
        const wanted = new Map(
          accounts.map((link) => [link.accountId, { role: link.role ?? null, isPrimary: link.isPrimary ?? false }]),
        );
        const removed = [...existing.keys()].filter((accountId) => !wanted.has(accountId));
        if (removed.length > 0) {
          await tx.contactAccount.deleteMany({ where: { orgId, contactId: id, accountId: { in: removed } } });
          linksChanged = true;
        }
        const added = [...wanted].filter(([accountId]) => !existing.has(accountId));
        if (added.length > 0) {
          await tx.contactAccount.createMany({
            data: added.map(([accountId, link]) => ({ orgId, contactId: id, accountId, ...link })),
          });
          linksChanged = true;
        }
        for (const [accountId, link] of wanted) {
          const before = existing.get(accountId);
          if (before && (before.role !== link.role || before.isPrimary !== link.isPrimary)) {
            await tx.contactAccount.update({
              where: { contactId_accountId: { contactId: id, accountId } },
              data: link,
            });
            linksChanged = true;
          }
        }
      }

      if (Object.keys(changes).length === 0 && !linksChanged) return current;
      // Relationships are part of the contact's representation, so changing only them still moves updatedAt.
      const contact = toContact((await contacts.update(orgId, current, data, new Date())) as ContactRow);
      await recordEvents(tx, orgId, origin, [{ name: "contact.updated", data: contact, before: current }]);
      return contact;
    });
  } catch (error) {
    if (isUniqueViolation(error) && fields.email !== undefined) throw emailTaken(fields.email);
    throw error;
  }
}

/**
 * Bulk upsert of up to 500 contacts (docs/api-contract.md §4.2) in one transaction with set-based SQL
 * (docs/architecture.md, "Data and migrations"). Items are matched on the email compared case-insensitively within the
 * organisation: one `INSERT … ON CONFLICT DO NOTHING` creates the new ones, one `UPDATE … FROM` applies the others
 * (fields an item leaves out keep their values; the email takes the item's spelling; `updatedAt` moves only when a
 * value changes). An item's `accountId` then adds the relationship when missing or applies the `role`/`isPrimary` given
 * to the existing one (isPrimary true clears the contact's other primary); relationships are never removed. A contact
 * whose relationships changed counts as changed. Records `contact.created` per created and `contact.updated` per
 * changed contact, in request order (docs/api-contract.md §6.1).
 * @returns `{ created, updated, total, results: [{ email, id, action }] }` in request order.
 * @throws ApiError `validation_error` (422) when an email appears twice in the request (case-insensitively, path
 * `contacts.<i>.email`), an item's accountId names no account of the organisation, or it would give its contact more
 * than {@link CONTACT_ACCOUNTS_MAX} account relationships (path `contacts.<i>.accountId`); nothing is written then.
 */
export async function bulkUpsertContacts(
  orgId: string,
  items: ContactCreate[],
  origin: WriteOrigin,
): Promise<ContactBulkResult> {
  const seen = new Map<string, number>();
  const duplicates: ErrorDetail[] = [];
  items.forEach((item, index) => {
    const key = emailKeyOf(item.email);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else duplicates.push({ path: ["contacts", String(index), "email"], message: `duplicates item ${first}` });
  });
  if (duplicates.length > 0) {
    throw new ApiError(
      "validation_error",
      "An email appears more than once in the request (compared case-insensitively)",
      {
        details: duplicates,
      },
    );
  }

  const now = new Date();
  const rows = items.map((item) => ({ ...item, emailKey: emailKeyOf(item.email), id: newId() }));
  const outcomes = await transaction(async (tx) => {
    await lockReferences(
      orgId,
      rows.flatMap((row, index) =>
        row.accountId
          ? [{ table: "Account" as const, id: row.accountId, path: ["contacts", String(index), "accountId"] }]
          : [],
      ),
    );
    const { outcomes, before } = await contacts.upsert(orgId, rows, now, "contacts");
    const changedIds = new Set(outcomes.filter((o) => o.action === "updated" && o.after).map((o) => o.id));

    const links = rows.flatMap((row, index) => {
      const contactId = outcomes[index]?.id;
      if (!row.accountId || !contactId) return [];
      return [
        {
          id: newId(),
          contactId,
          accountId: row.accountId,
          ...(row.role !== undefined ? { role: row.role } : {}),
          ...(row.isPrimary !== undefined ? { isPrimary: row.isPrimary } : {}),
        },
      ];
    });
    const relinked = await upsertLinks(tx, orgId, links, now.toISOString());
    await refuseCrowdedContacts(tx, orgId, rows, outcomes);
    const created = new Set(outcomes.filter((o) => o.action === "created").map((o) => o.id));
    const touched = [...relinked].filter((id) => !created.has(id) && !changedIds.has(id));
    if (touched.length > 0) {
      await tx.contact.updateMany({ where: { orgId, id: { in: touched } }, data: { updatedAt: now } });
      for (const id of touched) changedIds.add(id);
    }

    // Read again: relationships added by the items are part of the records the events carry.
    const after = await contacts.many(orgId, [...created, ...changedIds]);
    const events = outcomes.flatMap(({ id, action }) => {
      const contact = after.get(id);
      if (!contact || (action === "updated" && !changedIds.has(id))) return [];
      return [
        action === "created"
          ? { name: "contact.created" as const, data: contact }
          : { name: "contact.updated" as const, data: contact, before: before.get(id) },
      ];
    });
    await recordEvents(tx, orgId, origin, events);
    return outcomes;
  });

  const results = rows.map((row, index) => {
    const { id, action } = outcomes[index] as UpsertOutcome<Contact>;
    return { email: row.email, id, action };
  });
  const created = results.filter((r) => r.action === "created").length;
  return { created, updated: results.length - created, total: results.length, results };
}

/**
 * Refuses the items whose contact now has more than {@link CONTACT_ACCOUNTS_MAX} account relationships (the bound the
 * contact's `accounts` is documented with). A contact appears once per request, so each crowded contact is one item's.
 * @throws ApiError `validation_error` (422) naming `contacts.<i>.accountId` of each such item.
 */
async function refuseCrowdedContacts(
  tx: Prisma.TransactionClient,
  orgId: string,
  rows: ReadonlyArray<{ accountId?: string }>,
  outcomes: ReadonlyArray<{ id: string } | undefined>,
): Promise<void> {
  const linked = rows.flatMap((row, index) => (row.accountId ? [outcomes[index]?.id ?? ""] : []));
  if (linked.length === 0) return;
  const crowded = await tx.$queryRawUnsafe<{ contactId: string }[]>(
    `SELECT "contactId" FROM "ContactAccount" WHERE "orgId" = $1 AND "contactId" = ANY($2::text[])
     GROUP BY "contactId" HAVING count(*) > $3`,
    orgId,
    linked,
    CONTACT_ACCOUNTS_MAX,
  );
  if (crowded.length === 0) return;
  const ids = new Set(crowded.map((row) => row.contactId));
  const details = rows.flatMap((row, index) =>
    row.accountId && ids.has(outcomes[index]?.id ?? "")
      ? [
          {
            path: ["contacts", String(index), "accountId"],
            message: `would give the contact more than ${CONTACT_ACCOUNTS_MAX} account relationships`,
          },
        ]
      : [],
  );
  throw new ApiError("validation_error", `A contact has at most ${CONTACT_ACCOUNTS_MAX} account relationships`, {
    details,
  });
}

/**
 * Adds or adjusts the relationships bulk items ask for, set-based: demotes other primaries of contacts whose item sets
 * isPrimary true, inserts missing relationships, and applies the role/isPrimary given to existing ones. The contacts
 * involved are locked by the caller's insert or update, so no concurrent write can add a second primary.
 * @returns the ids of contacts whose relationships changed.
 */
async function upsertLinks(
  tx: Prisma.TransactionClient,
  orgId: string,
  links: ReadonlyArray<{ id: string; contactId: string; accountId: string; role?: string | null; isPrimary?: boolean }>,
  now: string,
): Promise<Set<string>> {
  const changed = new Set<string>();
  if (links.length === 0) return changed;
  const json = JSON.stringify(links);
  const demoted = await tx.$queryRawUnsafe<{ contactId: string }[]>(
    `UPDATE "ContactAccount" AS ca SET "isPrimary" = false
     FROM jsonb_array_elements($2::jsonb) AS e
     WHERE ca."orgId" = $1 AND ca."contactId" = e->>'contactId' AND ca."accountId" <> e->>'accountId'
       AND ca."isPrimary" AND COALESCE((e->>'isPrimary')::boolean, false)
     RETURNING ca."contactId"`,
    orgId,
    json,
  );
  const inserted = await tx.$queryRawUnsafe<{ contactId: string }[]>(
    `INSERT INTO "ContactAccount" ("id", "orgId", "contactId", "accountId", "role", "isPrimary", "createdAt")
     SELECT e->>'id', $1, e->>'contactId', e->>'accountId', e->>'role', COALESCE((e->>'isPrimary')::boolean, false),
            $3::timestamptz AT TIME ZONE 'UTC'
     FROM jsonb_array_elements($2::jsonb) AS e
     ON CONFLICT ("contactId", "accountId") DO NOTHING
     RETURNING "contactId"`,
    orgId,
    json,
    now,
  );
  const adjusted = await tx.$queryRawUnsafe<{ contactId: string }[]>(
    `UPDATE "ContactAccount" AS ca SET "role" = n."role", "isPrimary" = n."isPrimary"
     FROM (
       SELECT x."id",
              CASE WHEN e ? 'role' THEN e->>'role' ELSE x."role" END AS "role",
              CASE WHEN e ? 'isPrimary' THEN (e->>'isPrimary')::boolean ELSE x."isPrimary" END AS "isPrimary"
       FROM jsonb_array_elements($2::jsonb) AS e
       JOIN "ContactAccount" AS x ON x."orgId" = $1 AND x."contactId" = e->>'contactId' AND x."accountId" = e->>'accountId'
     ) AS n
     WHERE ca."id" = n."id" AND (ca."role", ca."isPrimary") IS DISTINCT FROM (n."role", n."isPrimary")
     RETURNING ca."contactId"`,
    orgId,
    json,
  );
  for (const row of [...demoted, ...inserted, ...adjusted]) changed.add(row.contactId);
  return changed;
}
