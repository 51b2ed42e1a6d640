// Erasure of a person (GDPR Art. 17; docs/architecture.md, "Erasure of a person"): a contact is removed with its
// links, and its personal data is redacted where the service stored copies of it (events and so webhook payloads,
// delivery attempts, the API audit log's query strings, stored idempotent answers), rows kept, values "[erased]", in
// one transaction of set-based statements. Two rules find the data:
//
// * Structure: inside the contact's own representation (its events' `data`, an object whose `id` is the contact's
//   anywhere in a stored JSON document, and its own events' `previous`) the personal fields become "[erased]".
// * Values: every email, phone number and full name the contact had (its row, and every value its own events carried
//   before) is a whole-word, case-insensitive pattern; each match in any other stored text becomes "[erased]", except
//   in another contact's own fields (a shared switchboard number stays with the colleague who also has it).
import { Prisma } from "../db/generated/client";
import { type TransactionClient, transaction } from "../db/transaction";
import type { ContactErasure } from "../schemas/erasure";
import { flushAudit } from "./audit";
import { recordEvents, tombstone, type WriteOrigin } from "./events";
import { lockForUpdate } from "./kit";

/**
 * The fields of a contact's representation that hold personal data (docs/api-contract.md §2.4): its scalars, the
 * `role` of each account relationship, and custom field values (`customFields`, where present). Ids, timestamps and
 * the related accounts' names are not the person's and stay.
 */
export const CONTACT_PERSONAL_FIELDS = [
  "email",
  "firstName",
  "lastName",
  "title",
  "phone",
  "role",
  "customFields",
] as const;

/** What replaces an erased value (docs/api-contract.md §4.16). */
export const ERASED = "[erased]";

/** Fewest digits a phone number needs to be matched as a value: shorter ones (extensions) would match other text. */
const PHONE_MIN_DIGITS = 6;

/**
 * One state of a contact's identifying fields: its row now, or as one of its events carried it (docs/architecture.md,
 * "Erasure of a person").
 */
export interface IdentifyingValues {
  email: string | null;
  phone: string | null;
  firstName: string | null;
  lastName: string | null;
}

/**
 * How one form of the values is found: `regex`, a case-insensitive ARE matching any value as a whole word, and `like`,
 * lower-case `LIKE` patterns of which every text the regex matches contains one (the longest word of each value): a
 * cheap first test, since lower-casing and `LIKE` cost about a third of a case-insensitive regular expression over
 * every row of a table.
 */
export interface ValueMatcher {
  regex: string;
  like: string[];
}

/** The matchers of one erasure: in plain text, in JSON text, and in a percent-encoded query string. */
export interface ErasurePatterns {
  /** Stored text (answer bodies, errors, JSON strings). */
  text: ValueMatcher;
  /** The values JSON-escaped, as `jsonb::text` writes strings: finds the rows `erase_jsonb` then changes. */
  json: ValueMatcher;
  /** The values as written, percent-encoded and form-encoded, for query strings. */
  query: ValueMatcher;
}

// A value is a word of its own: no letter, digit or underscore right before or after it (PostgreSQL's lookarounds).
const BEFORE = "(?<![[:alnum:]_])";
const AFTER = "(?![[:alnum:]_])";

/** `text` as a literal inside a PostgreSQL ARE; runs of white space match any white space. */
function literal(text: string): string {
  return text
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&"))
    .join("\\s+");
}

function matcher(needles: Iterable<string>): ValueMatcher {
  const unique = [...new Set([...needles].map((needle) => needle.trim()).filter((needle) => needle !== ""))];
  // Longest first, so a value that contains another is replaced whole.
  unique.sort((a, b) => b.length - a.length);
  const longestWord = (needle: string) =>
    needle.split(/\s+/).reduce((longest, word) => (word.length > longest.length ? word : longest), "");
  return {
    regex: `${BEFORE}(?:${unique.map(literal).join("|")})${AFTER}`,
    like: [
      ...new Set(
        unique.map(
          (needle) =>
            `%${longestWord(needle)
              .toLowerCase()
              .replace(/[\\%_]/g, "\\$&")}%`,
        ),
      ),
    ],
  };
}

/**
 * The values an erasure matches elsewhere, from every state the contact had: each email; each phone with at least
 * {@link PHONE_MIN_DIGITS} digits; each full name (first and last name both present, so a lone first name such as
 * "Ann" never redacts other people's text). Values are matched as written, case-insensitively and as whole words.
 * @returns the distinct values, longest first.
 */
export function identifyingValues(states: readonly IdentifyingValues[]): string[] {
  const values = new Set<string>();
  for (const state of states) {
    if (state.email?.trim()) values.add(state.email.trim());
    if (state.phone && (state.phone.match(/\d/g)?.length ?? 0) >= PHONE_MIN_DIGITS) values.add(state.phone.trim());
    if (state.firstName?.trim() && state.lastName?.trim())
      values.add(`${state.firstName.trim()} ${state.lastName.trim()}`);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * The regular expressions (PostgreSQL ARE, applied case-insensitively) matching `values` as whole words: in text, in
 * JSON text (escaped as `jsonb::text` writes strings) and in query strings (as written, percent-encoded as
 * `encodeURIComponent` writes it, and form-encoded with `+` for spaces).
 */
export function erasurePatterns(values: readonly string[]): ErasurePatterns {
  return {
    text: matcher(values),
    json: matcher(values.map((value) => JSON.stringify(value).slice(1, -1))),
    query: matcher(
      values.flatMap((value) => [
        value,
        encodeURIComponent(value),
        new URLSearchParams({ v: value }).toString().slice("v=".length),
      ]),
    ),
  };
}

/** Every state of the contact's identifying fields: its row, and its own events' `data` and `previous` values. */
async function contactStates(tx: TransactionClient, orgId: string, id: string): Promise<IdentifyingValues[]> {
  return tx.$queryRaw<IdentifyingValues[]>`
    SELECT c."email", c."phone", c."firstName", c."lastName" FROM "Contact" AS c WHERE c."orgId" = ${orgId} AND c."id" = ${id}
    UNION
    SELECT e."data"->>'email', e."data"->>'phone', e."data"->>'firstName', e."data"->>'lastName'
    FROM "Event" AS e
    WHERE e."orgId" = ${orgId} AND e."resource" = 'contact' AND e."resourceId" = ${id}
    UNION
    -- previous holds only the changed fields: the others had the values data has.
    SELECT ${fieldBefore("email")}, ${fieldBefore("phone")}, ${fieldBefore("firstName")}, ${fieldBefore("lastName")}
    FROM "Event" AS e
    WHERE e."orgId" = ${orgId} AND e."resource" = 'contact' AND e."resourceId" = ${id}
      AND jsonb_typeof(e."previous") = 'object'`;
}

function fieldBefore(field: string): Prisma.Sql {
  return Prisma.sql`CASE WHEN e."previous" ? ${field} THEN e."previous"->>${field} ELSE e."data"->>${field} END`;
}

/**
 * Erases a contact (docs/api-contract.md §4.16; docs/architecture.md, "Erasure of a person"), in one transaction:
 * locks it (concurrent writes of the contact wait, then find it gone), redacts its personal data in the stored events
 * of its organisation (so in every later webhook attempt, redelivery and feed read), in delivery attempts' stored
 * answers and errors, in the API audit log's query strings and in stored idempotent answers, rows kept and values
 * "[erased]"; removes its account relationships, clears `contactId` on its touchpoints (moving their `updatedAt`),
 * deletes the contact (its search entry goes with it) and records `contact.erased` carrying a tombstone
 * `{id, resource: "contact", deleted: true}`. Audit rows this process still holds in memory are stored first, so
 * they are redacted too.
 * @returns what was removed and redacted, counted per store.
 * @throws ApiError `not_found` (404) when the contact is missing, already erased or another organisation's.
 */
export async function eraseContact(orgId: string, id: string, origin: WriteOrigin): Promise<ContactErasure> {
  await flushAudit();
  return transaction(async (tx) => {
    await lockForUpdate("Contact", "Contact", orgId, id);
    const patterns = erasurePatterns(identifyingValues(await contactStates(tx, orgId, id)));
    // A change of a custom field value names it `customFields.<key>` in `previous` (docs/api-contract.md §6.2).
    const customKeys = await tx.customField.findMany({ where: { orgId, resource: "contact" }, select: { key: true } });
    const fields = [...CONTACT_PERSONAL_FIELDS, ...customKeys.map(({ key }) => `customFields.${key}`)];

    // One pass over the organisation's events: its own by resource id, the others by a match in their JSON text.
    const events = await tx.$queryRaw<Array<{ id: string; own: boolean }>>`
      WITH found AS (
        SELECT e."id", e."data", e."previous", e."resource" = 'contact' AND e."resourceId" = ${id} AS "own",
               CASE WHEN e."resource" = 'contact' THEN ${fields}::text[] ELSE '{}'::text[] END AS "kept"
        FROM "Event" AS e
        WHERE e."orgId" = ${orgId}
          AND ((e."resource" = 'contact' AND e."resourceId" = ${id})
            OR lower(e."data"::text) LIKE ANY(${patterns.json.like}::text[])
            OR lower(e."previous"::text) LIKE ANY(${patterns.json.like}::text[]))
      ), redacted AS (
        SELECT f."id", f."own", f."data" AS "before", f."previous" AS "previousBefore",
               "erase_jsonb"(f."data", ${id}, ${fields}::text[], ${patterns.text.regex}, f."kept", f."own") AS "data",
               "erase_jsonb"(f."previous", ${id}, ${fields}::text[], ${patterns.text.regex}, f."kept", f."own") AS "previous"
        FROM found AS f
      )
      UPDATE "Event" AS e SET "data" = r."data", "previous" = r."previous"
      FROM redacted AS r
      WHERE e."id" = r."id" AND (r."data" IS DISTINCT FROM r."before" OR r."previous" IS DISTINCT FROM r."previousBefore")
      RETURNING e."id", r."own"`;
    const eventIds = events.map((event) => event.id);
    const ownEventIds = events.filter((event) => event.own).map((event) => event.id);

    const [deliveries] = await tx.$queryRaw<Array<{ count: number }>>`
      SELECT count(*)::int AS "count" FROM "WebhookDelivery"
      WHERE "orgId" = ${orgId} AND "eventId" = ANY(${eventIds}::text[])`;
    // A receiver's answer to a delivery of the contact's own event may echo the payload: it is erased whole. Other
    // answers and errors lose the values only.
    const deliveryAttempts = await tx.$executeRaw`
      UPDATE "DeliveryAttempt" AS a
      SET "responseBody" = CASE WHEN d."eventId" = ANY(${ownEventIds}::text[]) AND a."responseBody" IS NOT NULL
                                THEN ${ERASED}
                                ELSE regexp_replace(a."responseBody", ${patterns.text.regex}, ${ERASED}, 'gi') END,
          "error" = regexp_replace(a."error", ${patterns.text.regex}, ${ERASED}, 'gi')
      FROM "WebhookDelivery" AS d
      WHERE d."id" = a."deliveryId" AND d."orgId" = ${orgId}
        AND ((d."eventId" = ANY(${ownEventIds}::text[]) AND a."responseBody" IS NOT NULL AND a."responseBody" <> ${ERASED})
          OR (lower(a."responseBody") LIKE ANY(${patterns.text.like}::text[]) AND a."responseBody" ~* ${patterns.text.regex})
          OR (lower(a."error") LIKE ANY(${patterns.text.like}::text[]) AND a."error" ~* ${patterns.text.regex}))`;
    const auditLogs = await tx.$executeRaw`
      UPDATE "AuditLog" SET "query" = regexp_replace("query", ${patterns.query.regex}, ${ERASED}, 'gi')
      WHERE "orgId" = ${orgId} AND lower("query") LIKE ANY(${patterns.query.like}::text[])
        AND "query" ~* ${patterns.query.regex}`;
    // Stored answers are the JSON envelope the request was answered with (a claim of a request still running holds an
    // empty body, which is left alone); a redacted one is replayed redacted.
    const idempotencyRecords = await tx.$executeRaw`
      WITH found AS (
        SELECT k."id", k."path" AS "pathBefore",
               CASE WHEN left(k."responseBody", 1) = '{' THEN k."responseBody"::jsonb END AS "before",
               regexp_replace(k."path", ${patterns.query.regex}, ${ERASED}, 'gi') AS "path"
        FROM "IdempotencyKey" AS k
        WHERE k."orgId" = ${orgId}
          AND (strpos(k."responseBody", ${id}) > 0 OR lower(k."responseBody") LIKE ANY(${patterns.json.like}::text[])
            OR lower(k."path") LIKE ANY(${patterns.query.like}::text[]))
      ), redacted AS (
        SELECT f.*, "erase_jsonb"(f."before", ${id}, ${fields}::text[], ${patterns.text.regex},
                                  CASE WHEN f."pathBefore" LIKE '%/contacts%' THEN ${fields}::text[] ELSE '{}'::text[] END,
                                  false) AS "body"
        FROM found AS f
      )
      UPDATE "IdempotencyKey" AS k
      SET "responseBody" = coalesce(r."body"::text, k."responseBody"), "path" = r."path"
      FROM redacted AS r
      WHERE k."id" = r."id" AND (r."body" IS DISTINCT FROM r."before" OR r."path" <> r."pathBefore")`;

    const accountLinks = await tx.$executeRaw`
      DELETE FROM "ContactAccount" WHERE "orgId" = ${orgId} AND "contactId" = ${id}`;
    const touchpointLinks = await tx.$executeRaw`
      UPDATE "Touchpoint" SET "contactId" = NULL, "updatedAt" = now() AT TIME ZONE 'UTC'
      WHERE "orgId" = ${orgId} AND "contactId" = ${id}`;
    const contacts = await tx.$executeRaw`DELETE FROM "Contact" WHERE "orgId" = ${orgId} AND "id" = ${id}`;
    await recordEvents(tx, orgId, origin, [{ name: "contact.erased", data: tombstone("contact", id) }]);

    return {
      id,
      erased: true,
      removed: { contacts, accountLinks, touchpointLinks },
      redacted: {
        events: eventIds.length,
        webhookDeliveries: deliveries?.count ?? 0,
        deliveryAttempts,
        auditLogs,
        idempotencyRecords,
      },
    };
  });
}
