import type { Prisma } from "../db/generated/client";
import { newId } from "../db/ids";
import { prisma, transaction } from "../db/transaction";
import { ApiError, type ErrorDetail } from "../errors";
import {
  CONTACT_ACCOUNTS_MAX,
  CONTACT_DEFAULT_SORT,
  CONTACT_FILTERS,
  type Contact,
  type ContactBulkResult,
  type ContactCreate,
  type ContactListQuery,
  type ContactUpdate,
} from "../schemas/contacts";
import { recordEvents, type WriteOrigin } from "./events";
import { filterWhere } from "./filters";
import { changedFields, isUniqueViolation, lockForUpdate, lockReferences, lockRowsBy, resourceReader } from "./kit";
import { listPage, type SortableFields } from "./pagination";

const contactSelect = {
  id: true,
  email: true,
  emailKey: true,
  firstName: true,
  lastName: true,
  title: true,
  phone: true,
  createdAt: true,
  updatedAt: true,
  accounts: {
    select: { accountId: true, role: true, isPrimary: true, account: { select: { name: true } } },
    // A stable order keeps GET bodies and event payloads identical for the same state.
    orderBy: [{ isPrimary: "desc" }, { account: { name: "asc" } }, { accountId: "asc" }],
  },
} satisfies Prisma.ContactSelect;

type ContactRow = Prisma.ContactGetPayload<{ select: typeof contactSelect }>;

/** Keyset columns of the contact list; `emailKey` is what the public sort field `email` orders by. */
const SORT_COLUMNS: SortableFields = {
  createdAt: { nullable: false },
  updatedAt: { nullable: false },
  emailKey: { nullable: false },
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
      accountName: link.account.name,
      role: link.role,
      isPrimary: link.isPrimary,
    })),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function emailTaken(email: string, path: string[] = ["email"]): ApiError {
  return new ApiError("validation_error", `email ${email} is already used by another contact`, {
    details: [{ path, message: "already used by another contact of this organisation (compared case-insensitively)" }],
  });
}

const contacts = resourceReader({
  noun: "Contact",
  findFirst: (where) => prisma().contact.findFirst({ where, select: contactSelect }),
  serialise: toContact,
});

/** Rewrites the public `sort` (field `email`) to the keyset columns (`emailKey`); a raw `emailKey` is not public. */
function toColumnSort(sort: string | undefined): string | undefined {
  if (sort === undefined) return undefined;
  return sort
    .split(",")
    .map((pair) => pair.trim())
    .filter((pair) => pair.split(":")[0] !== "emailKey")
    .map((pair) => (pair.split(":")[0] === "email" ? `emailKey${pair.slice("email".length)}` : pair))
    .join(",");
}

/**
 * Lists an organisation's contacts, one keyset page at a time (docs/api-contract.md §4.2, §4.9); each item has its
 * relationships. Filters: `accountId` (contacts related to that account; an unknown one gives an empty page), `email`
 * (exact, case-insensitive), `updatedAfter`; `sort` over `createdAt, updatedAt, email, lastName` (email
 * case-insensitive).
 * @returns `{ data: Contact[], hasMore, nextCursor }`
 * @throws ApiError `bad_request` (400) when `cursor` names no contact of the organisation.
 */
export function listContacts(orgId: string, query: ContactListQuery) {
  const filters: Prisma.ContactWhereInput[] = [{ orgId }, ...filterWhere(query, CONTACT_FILTERS)];
  if (query.accountId) filters.push({ accounts: { some: { orgId, accountId: query.accountId } } });
  if (query.email) filters.push({ emailKey: emailKeyOf(query.email) });
  return listPage({
    query: { ...query, sort: toColumnSort(query.sort) },
    fields: SORT_COLUMNS,
    defaultSort: CONTACT_DEFAULT_SORT,
    filters,
    findCursor: (id) =>
      prisma().contact.findFirst({
        where: { orgId, id },
        select: { id: true, createdAt: true, updatedAt: true, emailKey: true, lastName: true },
      }),
    findMany: (args) => prisma().contact.findMany({ ...(args as Prisma.ContactFindManyArgs), select: contactSelect }),
    map: toContact,
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
export async function createContact(orgId: string, input: ContactCreate, origin: WriteOrigin): Promise<Contact> {
  const { accountId, role, isPrimary, ...fields } = input;
  try {
    return await transaction(async (tx) => {
      if (accountId) await lockReferences(orgId, [{ table: "Account", id: accountId, path: ["accountId"] }]);
      const row = await tx.contact.create({
        data: {
          ...fields,
          emailKey: emailKeyOf(fields.email),
          orgId,
          ...(accountId
            ? { accounts: { create: { orgId, accountId, role: role ?? null, isPrimary: isPrimary ?? false } } }
            : {}),
        },
        select: contactSelect,
      });
      const contact = toContact(row);
      await recordEvents(tx, orgId, origin, [{ name: "contact.created", data: contact }]);
      return contact;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw emailTaken(fields.email);
    throw error;
  }
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
      await lockForUpdate("Contact", "Contact", orgId, id);
      const current = await tx.contact.findFirstOrThrow({ where: { orgId, id }, select: contactSelect });
      const scalars: Pick<Contact, "email" | "firstName" | "lastName" | "title" | "phone"> = toContact(current);
      const { changes } = changedFields(scalars, fields);
      const data: Prisma.ContactUpdateInput = {
        ...changes,
        ...(changes.email !== undefined ? { emailKey: emailKeyOf(changes.email) } : {}),
      };

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

      if (Object.keys(changes).length === 0 && !linksChanged) return toContact(current);
      // Relationships are part of the contact's representation, so changing only them still moves updatedAt.
      const row = await tx.contact.update({
        where: { id, orgId },
        data: { ...data, updatedAt: new Date() },
        select: contactSelect,
      });
      const contact = toContact(row);
      await recordEvents(tx, orgId, origin, [{ name: "contact.updated", data: contact, before: toContact(current) }]);
      return contact;
    });
  } catch (error) {
    if (isUniqueViolation(error) && fields.email !== undefined) throw emailTaken(fields.email);
    throw error;
  }
}

interface BulkRow {
  id: string;
  emailKey: string;
  changed?: boolean;
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

  const now = new Date().toISOString();
  const rows = items.map((item) => ({ ...item, emailKey: emailKeyOf(item.email), id: newId() }));
  const outcome = new Map<number, { id: string; action: "created" | "updated" }>();
  const changedIds = new Set<string>();

  await transaction(async (tx) => {
    await lockReferences(
      orgId,
      rows.flatMap((row, index) =>
        row.accountId
          ? [{ table: "Account" as const, id: row.accountId, path: ["contacts", String(index), "accountId"] }]
          : [],
      ),
    );

    const emailKeys = rows.map((row) => row.emailKey);
    await lockRowsBy("Contact", orgId, "emailKey", emailKeys);
    const before = new Map(
      (await tx.contact.findMany({ where: { orgId, emailKey: { in: emailKeys } }, select: contactSelect })).map(
        (row) => [row.id, toContact(row)],
      ),
    );

    let pending = rows.map((row, index) => ({ row, index }));
    // A matched contact removed between the two statements (no API deletes contacts, but the database may) is created
    // on the next pass; two passes always suffice.
    for (let pass = 0; pass < 3 && pending.length > 0; pass++) {
      const inserted = await tx.$queryRawUnsafe<BulkRow[]>(
        `INSERT INTO "Contact" ("id", "orgId", "email", "emailKey", "firstName", "lastName", "title", "phone", "createdAt", "updatedAt")
         SELECT e->>'id', $1, e->>'email', e->>'emailKey', e->>'firstName', e->>'lastName', e->>'title', e->>'phone',
                $3::timestamptz AT TIME ZONE 'UTC', $3::timestamptz AT TIME ZONE 'UTC'
         FROM jsonb_array_elements($2::jsonb) AS e
         ON CONFLICT ("orgId", "emailKey") DO NOTHING
         RETURNING "id", "emailKey"`,
        orgId,
        JSON.stringify(pending.map((p) => p.row)),
        now,
      );
      const createdIds = new Set(inserted.map((row) => row.id));
      for (const p of pending) if (createdIds.has(p.row.id)) outcome.set(p.index, { id: p.row.id, action: "created" });
      const conflicting = pending.filter((p) => !createdIds.has(p.row.id));
      pending = [];
      if (conflicting.length === 0) break;

      const updated = await tx.$queryRawUnsafe<BulkRow[]>(
        `UPDATE "Contact" AS c SET
           "email" = n."email", "firstName" = n."firstName", "lastName" = n."lastName", "title" = n."title", "phone" = n."phone",
           "updatedAt" = CASE WHEN (c."email", c."firstName", c."lastName", c."title", c."phone")
                                    IS DISTINCT FROM (n."email", n."firstName", n."lastName", n."title", n."phone")
                              THEN $3::timestamptz AT TIME ZONE 'UTC' ELSE c."updatedAt" END
         FROM (
           SELECT x."id",
                  e->>'email' AS "email",
                  CASE WHEN e ? 'firstName' THEN e->>'firstName' ELSE x."firstName" END AS "firstName",
                  CASE WHEN e ? 'lastName' THEN e->>'lastName' ELSE x."lastName" END AS "lastName",
                  CASE WHEN e ? 'title' THEN e->>'title' ELSE x."title" END AS "title",
                  CASE WHEN e ? 'phone' THEN e->>'phone' ELSE x."phone" END AS "phone"
           FROM jsonb_array_elements($2::jsonb) AS e
           JOIN "Contact" AS x ON x."orgId" = $1 AND x."emailKey" = e->>'emailKey'
         ) AS n
         WHERE c."id" = n."id"
         RETURNING c."id", c."emailKey", c."updatedAt" = $3::timestamptz AT TIME ZONE 'UTC' AS "changed"`,
        orgId,
        JSON.stringify(conflicting.map((p) => p.row)),
        now,
      );
      for (const row of updated) if (row.changed) changedIds.add(row.id);
      const byEmailKey = new Map(updated.map((row) => [row.emailKey, row.id]));
      for (const p of conflicting) {
        const id = byEmailKey.get(p.row.emailKey);
        if (id) outcome.set(p.index, { id, action: "updated" });
        else pending.push(p);
      }
    }
    if (pending.length > 0) throw new Error("bulk upsert did not settle after 3 passes");

    const links = rows.flatMap((row, index) => {
      const contactId = outcome.get(index)?.id;
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
    const relinked = await upsertLinks(tx, orgId, links, now);
    await refuseCrowdedContacts(tx, orgId, rows, outcome);
    const created = new Set([...outcome.values()].filter((o) => o.action === "created").map((o) => o.id));
    const touched = [...relinked].filter((id) => !created.has(id) && !changedIds.has(id));
    if (touched.length > 0) {
      await tx.contact.updateMany({ where: { orgId, id: { in: touched } }, data: { updatedAt: new Date(now) } });
      for (const id of touched) changedIds.add(id);
    }

    const eventRows = await tx.contact.findMany({
      where: { orgId, id: { in: [...created, ...changedIds] } },
      select: contactSelect,
    });
    const byId = new Map(eventRows.map((row) => [row.id, row]));
    const events = [...outcome.entries()]
      .sort(([a], [b]) => a - b)
      .flatMap(([, { id, action }]) => {
        const row = byId.get(id);
        if (!row || (action === "updated" && !changedIds.has(id))) return [];
        return [
          {
            name: action === "created" ? ("contact.created" as const) : ("contact.updated" as const),
            data: toContact(row),
            before: action === "created" ? undefined : before.get(id),
          },
        ];
      });
    await recordEvents(tx, orgId, origin, events);
  });

  const results = rows.map((row, index) => {
    const result = outcome.get(index);
    if (!result) throw new Error(`bulk item ${index} has no outcome`);
    return { email: row.email, ...result };
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
  outcome: ReadonlyMap<number, { id: string }>,
): Promise<void> {
  const linked = rows.flatMap((row, index) => (row.accountId ? [outcome.get(index)?.id ?? ""] : []));
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
    row.accountId && ids.has(outcome.get(index)?.id ?? "")
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
