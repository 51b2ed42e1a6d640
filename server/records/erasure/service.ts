// Erasure of a person (GDPR Art. 17; docs/architecture.md, "Erasure of a person"): a contact is removed with its
// links, and its personal data is redacted where the service stored copies of it (events and so webhook payloads,
// delivery attempts, the request log, stored idempotent answers, other records' custom field values and so the search
// index), rows kept, values "[erased]", in one transaction. Two rules find the data:
//
// * Structure: inside the contact's own representation (its events' `data` and `previous`, an object whose `id` is
//   the contact's anywhere in a stored JSON document) the personal fields become "[erased]".
// * Values: every email, phone number and full name the contact had (its row, and every value its own events carried
//   before) is matched by structure, unit by unit: each string of a JSON document, each name and value of a query
//   string (decoded, matched, encoded again), each segment of a path, each custom field value. Both sides are compared
//   in one spelling, PostgreSQL's: `lower(normalize(x, NFC))`, ı as i (`erasure_fold` and the other SQL functions of
//   migration 20261129110100_erasure_by_structure).
//
// Cost: each store is read once, in batches of 5,000 rows along an index, first filtered by `LIKE` on a few words that
// cover every value when there are such words, then by a hash join of its words with each value's rarest word: the
// work grows with the organisation's stored rows, not with the number of values times the text, and no statement's
// with the organisation's size. Only the rows found get a regular expression, of their own values. Every search runs
// before any row is locked; the locks come after, in the documented order, and are held only while the rows found are
// rewritten by primary key.
import { Prisma } from "../../db/generated/client";
import { type TransactionClient, transaction } from "../../db/transaction";
import { notFound } from "../../errors";
import { flushAudit } from "../../platform/request-log/record";
import { recordEvents, tombstone, type WriteOrigin } from "../events";
import type { ContactErasure } from "./schema";

/**
 * The fields of a contact's representation that hold personal data (docs/api-contract.md §2.4): its scalars, the
 * `role` of each account relationship, and custom field values (`customFields`, where present). Ids, timestamps and
 * the related accounts' names are not the person's and stay.
 */
const CONTACT_PERSONAL_FIELDS = ["email", "firstName", "lastName", "title", "phone", "role", "customFields"] as const;

/**
 * Another contact's own fields that a value never changes (docs/api-contract.md §4.16): a colleague who shares the
 * switchboard number keeps it. Its custom field values are not among them: a value equal to the person's identifier
 * is cleared there as on any record.
 */
const KEPT_CONTACT_FIELDS = ["email", "firstName", "lastName", "title", "phone"];

/** What replaces an erased value (docs/api-contract.md §4.16). */
const ERASED = "[erased]";

/**
 * Most words a store is first filtered with, by `LIKE` on each (see likeFilter): when the values need more (a contact
 * with many states that share no word), every row's words go straight to the hash join, whose cost does not grow with
 * their number.
 */
const LIKE_FILTER_MAX_WORDS = 8;

/**
 * Tables whose records carry custom field values, in the order an erasure locks them (docs/architecture.md, "Erasure
 * of a person": the order force-deleting an account takes them in too); contacts come last, with the erased one.
 */
const RECORD_TABLES = ["Account", "Deal", "Device", "Task", "Contact"] as const;
type RecordTable = (typeof RECORD_TABLES)[number];

/**
 * The values an erasure looks for, in their compared spelling (`erasure_value`: NFC, lower-case, trimmed, one space
 * for each run of white space), each with its key: its word that the fewest of the other values share (then the
 * longest), which a text holding the value as a word must hold as a word too.
 */
interface Needles {
  values: string[];
  keys: string[];
  /** Each value's words, in the order of `values`. */
  words: string[][];
}

/** Rows of one store that hold a key word: `patterns` (erasure_patterns of their values), or null for the id only. */
interface Candidate {
  id: string;
  patterns: string[] | null;
}

/** What the searches found, per store. */
interface Found {
  events: Candidate[];
  attempts: Candidate[];
  auditLogs: Candidate[];
  idempotencyRecords: Candidate[];
  records: Record<RecordTable, string[]>;
}

/** The name of the organisation's erasure lock (a transaction-level advisory lock, with the organisation's id). */
const ERASURE_LOCK = "contact-erasure";

/**
 * Every email, phone number (6 digits or more) and full name (first and last name both present, so a lone first name
 * such as "Ann" never redacts other people's text) the contact had, from its row and its own events' `data` and
 * `previous`, in the compared spelling, each with its key word; values without any letter or digit are left out.
 */
async function needlesOf(tx: TransactionClient, orgId: string, id: string): Promise<Needles> {
  const rows = await tx.$queryRaw<Array<{ value: string; key: string; words: string[] }>>`
    WITH own AS (
      SELECT e."data", e."previous" FROM "Event" AS e
      WHERE e."orgId" = ${orgId} AND e."resource" = 'contact' AND e."resourceId" = ${id}
    ), states AS (
      SELECT c."email", c."phone", c."firstName", c."lastName" FROM "Contact" AS c
      WHERE c."orgId" = ${orgId} AND c."id" = ${id}
      UNION ALL
      SELECT o."data"->>'email', o."data"->>'phone', o."data"->>'firstName', o."data"->>'lastName' FROM own AS o
      UNION ALL
      -- previous holds only the changed fields: the others had the values data has.
      SELECT ${before("email")}, ${before("phone")}, ${before("firstName")}, ${before("lastName")}
      FROM own AS o WHERE jsonb_typeof(o."previous") = 'object'
    ), raw AS (
      SELECT s."email" AS v FROM states AS s
      UNION SELECT s."phone" FROM states AS s WHERE length(regexp_replace(s."phone", '\\D', '', 'g')) >= 6
      UNION SELECT s."firstName" || ' ' || s."lastName" FROM states AS s
      WHERE btrim(s."firstName") <> '' AND btrim(s."lastName") <> ''
    ), vals AS (
      SELECT DISTINCT "erasure_value"(r.v) AS value FROM raw AS r WHERE r.v IS NOT NULL
    ), words AS (
      SELECT DISTINCT v.value, w.word FROM vals AS v, unnest(regexp_split_to_array(v.value, '[^[:alnum:]_]+')) AS w(word)
      WHERE w.word <> ''
    ), shared AS (
      SELECT w.word, count(*) AS n FROM words AS w GROUP BY w.word
    ), keyed AS (
      SELECT DISTINCT ON (w.value) w.value, w.word AS key
      FROM words AS w JOIN shared AS s ON s.word = w.word
      ORDER BY w.value, s.n, length(w.word) DESC, w.word
    )
    SELECT k.value, k.key, array_agg(w.word) AS words
    FROM keyed AS k JOIN words AS w ON w.value = k.value
    GROUP BY k.value, k.key`;
  return {
    values: rows.map((row) => row.value),
    keys: rows.map((row) => row.key),
    words: rows.map((row) => row.words),
  };
}

function before(field: string): Prisma.Sql {
  return Prisma.sql`CASE WHEN o."previous" ? ${field} THEN o."previous"->>${field} ELSE o."data"->>${field} END`;
}

/**
 * The `LIKE` patterns that pre-filter a store: a few words that together cover every value (each value has one of
 * them among its words, so a row holding a value as a word holds one of them as text), and the id when the store
 * needs it; none when no {@link LIKE_FILTER_MAX_WORDS} words cover the values. Chosen greedily: the word in most
 * uncovered values, counted by its length up to 6 characters (a longer word matches fewer unrelated rows).
 */
function likeFilter(needles: Needles, id: string | null): string[] {
  const uncovered = new Set(needles.values.keys());
  const cover: string[] = [];
  while (uncovered.size > 0 && cover.length < LIKE_FILTER_MAX_WORDS) {
    const counts = new Map<string, number>();
    for (const index of uncovered) {
      for (const word of new Set(needles.words[index])) counts.set(word, (counts.get(word) ?? 0) + 1);
    }
    let best = "";
    let bestScore = 0;
    for (const [word, count] of counts) {
      const score = count * Math.min(word.length, 6);
      if (score > bestScore || (score === bestScore && word < best)) [best, bestScore] = [word, score];
    }
    cover.push(best);
    for (const index of [...uncovered]) if (needles.words[index]?.includes(best)) uncovered.delete(index);
  }
  if (uncovered.size > 0) return [];
  return [...cover, ...(id === null ? [] : [id])].map((word) => `%${word.replace(/[\\%_]/g, "\\$&")}%`);
}

/** Rows one search statement reads at most: each statement's work is bounded whatever the organisation's size. */
const SEARCH_BATCH = 5_000;

/** A column of a store's keyset, as its batch selects it (`k0`, `k1`, …), with its SQL type. */
type KeyType = "bigint" | "text" | "timestamp";

/**
 * One store an erasure searches, batch by batch along one of its indexes: `batch(after)` selects at most
 * {@link SEARCH_BATCH} of the organisation's rows past `after` (a condition on its key columns), in key order, as
 * `"id"`, the key columns `"k0"`…, `"raw"`, the text searched, and any other column `words` needs; `words` gives a
 * batch row's (`b`) words; `filter`, when given, lets a row's raw text through besides holding a filter word (the
 * request log's encoded queries).
 */
interface Store {
  key: readonly KeyType[];
  batch: (after: Prisma.Sql) => Prisma.Sql;
  words: (row: Prisma.Sql) => Prisma.Sql;
  filter?: (raw: Prisma.Sql) => Prisma.Sql;
}

/** The keyset condition past `last` (the previous batch's last key, as JSON text), over `columns`. */
function pastKey(store: Store, columns: readonly string[], last: string | null): Prisma.Sql {
  if (last === null) return Prisma.sql`TRUE`;
  const values = store.key.map(
    (type, index) => Prisma.sql`(${last}::jsonb->>${Prisma.raw(String(index))})::${Prisma.raw(type)}`,
  );
  return Prisma.sql`(${Prisma.raw(columns.join(", "))}) > (${Prisma.join(values)})`;
}

/**
 * Searches one store, batch by batch: the rows holding one of the needles' key words (or `structure`, the contact's
 * id, in stores where its representation may be embedded) as a word, each with the expressions of its own values
 * (`erasure_patterns`), null when it holds the id only.
 */
async function searchStore(
  tx: TransactionClient,
  store: Store,
  columns: readonly string[],
  needles: Needles,
  structure: string | null,
): Promise<Candidate[]> {
  if (needles.values.length === 0 && structure === null) return [];
  const likes = likeFilter(needles, structure);
  // A row's words joined with the keys; the contact's id, where the structure rule applies, is a key of no value.
  const keys = Prisma.sql`(SELECT * FROM unnest(${needles.keys}::text[], ${needles.values}::text[]) AS k("word", "value")
                           UNION ALL SELECT ${structure}::text, NULL WHERE ${structure}::text IS NOT NULL)`;
  const like = (raw: Prisma.Sql) =>
    Prisma.sql`cardinality(${likes}::text[]) = 0 OR "erasure_fold"(${raw}) LIKE ANY(${likes}::text[])`;
  const found: Candidate[] = [];
  for (let last: string | null = null; ; ) {
    const rows: Array<Candidate & { last: string | null; size: number | null }> = await tx.$queryRaw`
      WITH batch AS MATERIALIZED (${store.batch(pastKey(store, columns, last))}),
      words AS (
        SELECT b."id", w."word" FROM batch AS b, unnest(${store.words(Prisma.sql`b`)}) AS w("word")
        WHERE b."raw" IS NOT NULL AND (${like(Prisma.sql`b."raw"`)}${store.filter ? Prisma.sql` OR ${store.filter(Prisma.sql`b."raw"`)}` : Prisma.empty})
      )
      SELECT w."id"::text AS "id",
             "erasure_patterns"(array_agg(DISTINCT k."value") FILTER (WHERE k."value" IS NOT NULL)) AS "patterns",
             NULL AS "last", NULL::int AS "size"
      FROM words AS w JOIN ${keys} AS k ON k."word" = w."word"
      GROUP BY w."id"
      UNION ALL
      SELECT NULL, NULL, (SELECT to_jsonb(ARRAY[${Prisma.join(
        store.key.map((_, index) => Prisma.raw(`b."k${index}"::text`)),
      )}])::text FROM batch AS b ORDER BY ${Prisma.raw(store.key.map((_, index) => `b."k${index}" DESC`).join(", "))} LIMIT 1),
             (SELECT count(*) FROM batch)::int`;
    for (const row of rows) if (row.id !== null) found.push({ id: row.id, patterns: row.patterns });
    const end = rows.find((row) => row.id === null);
    // A batch short of full was the last one.
    if (!end?.last || (end.size ?? 0) < SEARCH_BATCH) return found;
    last = end.last;
  }
}

/**
 * Finds, without locking anything, the rows of every store that hold one of the needles' key words (or the contact's
 * id, for the structure rule) as a word: events of other records, delivery attempts' answers and errors, request-log
 * paths and queries (decoded), stored idempotent answers and their paths, and records whose custom field values hold
 * one. The rows found are candidates: the redaction then matches their values exactly. Each statement reads one
 * batch of at most {@link SEARCH_BATCH} rows along an index.
 */
async function search(tx: TransactionClient, orgId: string, id: string, needles: Needles): Promise<Found> {
  const limit = Prisma.sql`LIMIT ${SEARCH_BATCH}`;
  const events = await searchStore(
    tx,
    {
      key: ["bigint"],
      batch: (after) => Prisma.sql`
        SELECT e."id", e."sequence" AS "k0", e."data"::text || ' ' || coalesce(e."previous"::text, '') AS "raw"
        FROM "Event" AS e
        WHERE e."orgId" = ${orgId} AND ${after} AND (e."resource" = 'contact' AND e."resourceId" = ${id}) IS NOT TRUE
        ORDER BY e."sequence" ${limit}`,
      words: (row) => Prisma.sql`"erasure_json_text_words"(${row}."raw")`,
    },
    ['e."sequence"'],
    needles,
    id,
  );
  // A receiver's answer may echo a payload (JSON) or be any text: its words both ways.
  const attempts = await searchStore(
    tx,
    {
      key: ["text", "timestamp", "text", "bigint"],
      batch: (after) => Prisma.sql`
        SELECT a."id", d."endpointId" AS "k0", d."createdAt" AS "k1", d."id" AS "k2", a."id" AS "k3",
               CASE WHEN a."responseBody" IS NOT NULL OR a."error" IS NOT NULL
                    THEN coalesce(a."responseBody", '') || ' ' || coalesce(a."error", '') END AS "raw"
        FROM "WebhookDelivery" AS d JOIN "DeliveryAttempt" AS a ON a."deliveryId" = d."id"
        WHERE d."orgId" = ${orgId} AND ${after}
        ORDER BY d."endpointId", d."createdAt", d."id", a."id" ${limit}`,
      words: (row) =>
        Prisma.sql`CASE WHEN strpos(${row}."raw", '\\') = 0 THEN "erasure_words"(${row}."raw")
                        ELSE "erasure_words"(${row}."raw") || "erasure_json_text_words"(${row}."raw") END`,
    },
    ['d."endpointId"', 'd."createdAt"', 'd."id"', 'a."id"'],
    needles,
    null,
  );
  // The request log: the organisation's rows, and the paths of rows without one (their queries keep no values). A
  // query is decoded for its words; before that, a row whose query holds an encoded character beyond ASCII cannot be
  // judged by its encoded text, and passes the filter.
  const requestLog = (organisation: Prisma.Sql): Store => ({
    key: ["timestamp", "bigint"],
    batch: (after) => Prisma.sql`
      SELECT l."id", l."createdAt" AS "k0", l."id" AS "k1", l."path", l."query",
             l."path" || ' ' || coalesce(l."query", '') AS "raw"
      FROM "AuditLog" AS l
      WHERE ${organisation} AND ${after}
      ORDER BY l."createdAt", l."id" ${limit}`,
    words: (row) => Prisma.sql`"erasure_words"(${row}."path" || ' ' || coalesce("form_decode"(${row}."query"), ''))`,
    filter: (raw) => Prisma.sql`${raw} ~ '%[89A-Fa-f][0-9A-Fa-f]'`,
  });
  const auditLogs = [
    ...(await searchStore(
      tx,
      requestLog(Prisma.sql`l."orgId" = ${orgId}`),
      ['l."createdAt"', 'l."id"'],
      needles,
      null,
    )),
    ...(await searchStore(tx, requestLog(Prisma.sql`l."orgId" IS NULL`), ['l."createdAt"', 'l."id"'], needles, null)),
  ];
  const idempotencyRecords = await searchStore(
    tx,
    {
      key: ["bigint"],
      batch: (after) => Prisma.sql`
        SELECT k."id", k."id" AS "k0", k."path", k."responseBody", k."path" || ' ' || k."responseBody" AS "raw"
        FROM "IdempotencyKey" AS k
        WHERE k."orgId" = ${orgId} AND ${after}
        ORDER BY k."id" ${limit}`,
      // The path's query decoded; the answer is JSON.
      words: (row) =>
        Prisma.sql`"erasure_words"(split_part(${row}."path", '?', 1) || ' ' || coalesce("form_decode"(nullif(substr(${row}."path", strpos(${row}."path", '?') + 1), ${row}."path")), ''))
                   || "erasure_json_text_words"(${row}."responseBody")`,
      filter: (raw) => Prisma.sql`${raw} ~ '%[89A-Fa-f][0-9A-Fa-f]'`,
    },
    ['k."id"'],
    needles,
    id,
  );

  const records = {} as Record<RecordTable, string[]>;
  for (const table of RECORD_TABLES) {
    // The table's name is one of RECORD_TABLES, never from a request. Only values count here, not the id.
    const found = await searchStore(
      tx,
      {
        key: ["timestamp", "text"],
        batch: (after) => Prisma.sql`
          SELECT r."id", r."createdAt" AS "k0", r."id" AS "k1",
                 CASE WHEN r."customFields" <> '{}'::jsonb THEN r."customFields"::text END AS "raw"
          FROM ${Prisma.raw(`"${table}"`)} AS r
          WHERE r."orgId" = ${orgId} AND ${after}
          ORDER BY r."createdAt", r."id" ${limit}`,
        words: (row) => Prisma.sql`"erasure_json_text_words"(${row}."raw")`,
      },
      ['r."createdAt"', 'r."id"'],
      needles,
      null,
    );
    records[table] = found.filter((row) => row.id !== id).map((row) => row.id);
  }
  return { events, attempts, auditLogs, idempotencyRecords, records };
}

/**
 * Locks the records whose custom field values an erasure clears, table by table in {@link RECORD_TABLES} order and by
 * ascending id within a table (`FOR NO KEY UPDATE`: a concurrent write that references them, such as linking a
 * contact to an account, does not wait), then the contacts (the erased one and those whose values it clears) by
 * ascending id `FOR UPDATE`: the order force-deleting an account takes its locks in, so the two never deadlock
 * (docs/architecture.md, "Erasure of a person").
 * @returns whether the erased contact still exists.
 */
async function lockInOrder(
  tx: TransactionClient,
  orgId: string,
  id: string,
  records: Record<RecordTable, string[]>,
): Promise<boolean> {
  for (const table of RECORD_TABLES) {
    if (table === "Contact") continue;
    if (records[table].length === 0) continue;
    await tx.$queryRaw`
      SELECT r."id" FROM ${Prisma.raw(`"${table}"`)} AS r
      WHERE r."orgId" = ${orgId} AND r."id" = ANY(${records[table]}::text[])
      ORDER BY r."id" FOR NO KEY UPDATE`;
  }
  const contacts = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT c."id" FROM "Contact" AS c
    WHERE c."orgId" = ${orgId} AND c."id" = ANY(${[id, ...records.Contact]}::text[])
    ORDER BY c."id" FOR UPDATE`;
  return contacts.some((contact) => contact.id === id);
}

/** Counts of one application of the redaction: the ids of the rows each store changed. */
interface Applied {
  events: Set<string>;
  attempts: Set<string>;
  auditLogs: Set<string>;
  idempotencyRecords: Set<string>;
  records: Set<string>;
}

/**
 * Rewrites the rows found, by primary key, each from its current version (a write that committed since the search is
 * kept): values redacted in other records' events (another contact's own fields kept), delivery attempts, request-log
 * paths and queries, stored idempotent answers and their paths; custom field values equal to a value cleared, the
 * record's `updatedAt` moved (its search entry follows, written by the triggers of the search index).
 */
async function redact(
  tx: TransactionClient,
  orgId: string,
  id: string,
  fields: readonly string[],
  needles: Needles,
  found: Found,
  applied: Applied,
): Promise<void> {
  const add = (into: Set<string>, rows: Array<{ id: string }>) => {
    for (const row of rows) into.add(row.id);
  };
  const candidates = (list: Candidate[]) => Prisma.sql`jsonb_to_recordset(${JSON.stringify(list)}::jsonb)`;
  // The ids again as an array, so the rows are found by primary key.
  const ids = (list: Candidate[]) => list.map((candidate) => candidate.id);
  if (found.events.length > 0) {
    const kept = Prisma.sql`CASE WHEN l."resource" = 'contact' THEN ${KEPT_CONTACT_FIELDS}::text[] ELSE '{}'::text[] END`;
    add(
      applied.events,
      await tx.$queryRaw`
        WITH locked AS (
          SELECT e."id", e."resource", e."data", e."previous", c."patterns"
          FROM "Event" AS e JOIN ${candidates(found.events)} AS c("id" text, "patterns" text[]) ON c."id" = e."id"
          WHERE e."id" = ANY(${ids(found.events)}::text[]) AND e."orgId" = ${orgId}
          ORDER BY e."id" FOR UPDATE OF e
        ), redacted AS MATERIALIZED (
          SELECT l."id", l."data" AS "dataBefore", l."previous" AS "previousBefore",
                 "erase_jsonb"(l."data", ${id}, ${fields}::text[], l."patterns", ${kept}, false) AS "data",
                 "erase_jsonb"(l."previous", ${id}, ${fields}::text[], l."patterns", ${kept}, false) AS "previous"
          FROM locked AS l
        )
        ${updateChanged("Event", ["data", "previous"])}`,
    );
  }
  if (found.attempts.length > 0) {
    add(
      applied.attempts,
      await tx.$queryRaw`
        WITH locked AS (
          SELECT a."id", a."responseBody", a."error", c."patterns"
          FROM "DeliveryAttempt" AS a JOIN ${candidates(found.attempts)} AS c("id" bigint, "patterns" text[]) ON c."id" = a."id"
          JOIN "WebhookDelivery" AS d ON d."id" = a."deliveryId"
          WHERE a."id" = ANY(${ids(found.attempts)}::bigint[]) AND d."orgId" = ${orgId}
          ORDER BY a."id" FOR UPDATE OF a
        ), redacted AS MATERIALIZED (
          SELECT l."id", l."responseBody" AS "responseBodyBefore", l."error" AS "errorBefore",
                 "erase_text"(l."responseBody", l."patterns") AS "responseBody", "erase_text"(l."error", l."patterns") AS "error"
          FROM locked AS l
        )
        ${updateChanged("DeliveryAttempt", ["responseBody", "error"])}`,
    );
  }
  if (found.auditLogs.length > 0) {
    add(
      applied.auditLogs,
      await tx.$queryRaw`
        WITH locked AS (
          SELECT l."id", l."path", l."query", c."patterns"
          FROM "AuditLog" AS l JOIN ${candidates(found.auditLogs)} AS c("id" bigint, "patterns" text[]) ON c."id" = l."id"
          WHERE l."id" = ANY(${ids(found.auditLogs)}::bigint[]) AND (l."orgId" = ${orgId} OR l."orgId" IS NULL)
          ORDER BY l."id" FOR UPDATE OF l
        ), redacted AS MATERIALIZED (
          SELECT l."id", l."path" AS "pathBefore", l."query" AS "queryBefore",
                 "erase_segments"(l."path", l."patterns") AS "path", "erase_query"(l."query", l."patterns") AS "query"
          FROM locked AS l
        )
        ${updateChanged("AuditLog", ["path", "query"])}`,
    );
  }
  if (found.idempotencyRecords.length > 0) {
    add(
      applied.idempotencyRecords,
      await tx.$queryRaw`
        WITH locked AS (
          SELECT k."id", k."path", k."responseBody", c."patterns"
          FROM "IdempotencyKey" AS k
          JOIN ${candidates(found.idempotencyRecords)} AS c("id" bigint, "patterns" text[]) ON c."id" = k."id"
          WHERE k."id" = ANY(${ids(found.idempotencyRecords)}::bigint[]) AND k."orgId" = ${orgId}
          ORDER BY k."id" FOR UPDATE OF k
        ), redacted AS MATERIALIZED (
          -- A stored answer of a contact's request keeps another contact's own fields, as events do.
          SELECT l."id", l."path" AS "pathBefore", l."responseBody" AS "responseBodyBefore",
                 "erase_path"(l."path", l."patterns") AS "path",
                 "erase_stored_answer"(l."responseBody", ${id}, ${fields}::text[], l."patterns",
                   CASE WHEN l."path" LIKE '/contacts%' THEN ${KEPT_CONTACT_FIELDS}::text[] ELSE '{}'::text[] END)
                   AS "responseBody"
          FROM locked AS l
        )
        ${updateChanged("IdempotencyKey", ["path", "responseBody"])}`,
    );
  }
  for (const table of RECORD_TABLES) {
    if (found.records[table].length === 0) continue;
    add(
      applied.records,
      await tx.$queryRaw`
        UPDATE ${Prisma.raw(`"${table}"`)} AS r
        SET "customFields" = "erase_custom_values"(r."customFields", ${needles.values}::text[]),
            "updatedAt" = now() AT TIME ZONE 'UTC'
        WHERE r."orgId" = ${orgId} AND r."id" = ANY(${found.records[table]}::text[]) AND r."id" <> ${id}
          AND "erase_custom_values"(r."customFields", ${needles.values}::text[]) <> r."customFields"
        RETURNING ${`${table}:`} || r."id" AS "id"`,
    );
  }
}

/**
 * The end of a redaction statement: updates `table` from the `redacted` rows (each column and its value
 * `<column>Before`, both read under the row's lock), where a column changed.
 * @returns the statement's SQL, returning the ids of the rows changed as text.
 */
function updateChanged(table: string, columns: readonly string[]): Prisma.Sql {
  const quoted = (name: string) => `"${name}"`;
  return Prisma.raw(`UPDATE ${quoted(table)} AS t SET ${columns.map((column) => `${quoted(column)} = r.${quoted(column)}`).join(", ")}
    FROM redacted AS r
    WHERE t."id" = r."id" AND (${columns.map((column) => `r.${quoted(column)} IS DISTINCT FROM r.${quoted(`${column}Before`)}`).join(" OR ")})
    RETURNING t."id"::text AS "id"`);
}

/** The needles of `now` that `then` did not have (values a write added between the search and the lock). */
function added(then: Needles, now: Needles): Needles {
  const known = new Set(then.values);
  const values: string[] = [];
  const keys: string[] = [];
  const words: string[][] = [];
  now.values.forEach((value, index) => {
    if (known.has(value)) return;
    values.push(value);
    keys.push(now.keys[index] as string);
    words.push(now.words[index] ?? []);
  });
  return { values, keys, words };
}

/**
 * Erases a contact (docs/api-contract.md §4.16; docs/architecture.md, "Erasure of a person"), in one transaction, in
 * the request (no worker is involved): finds its identifying values and every stored copy holding one (reads only),
 * then locks in the documented order (the organisation's erasure lock, records whose custom field values it clears,
 * the contacts), redacts the copies found, rows kept and values "[erased]": events of every record (so every later
 * webhook attempt, redelivery and feed read), delivery attempts' answers and errors, the request log's paths and
 * queries, stored idempotent answers; clears custom field values equal to one of its values on any record (their
 * `updatedAt` moves, their search entries follow); removes its account relationships, clears `contactId` on its
 * touchpoints (moving their `updatedAt`), deletes the contact (its search entry goes with it) and records
 * `contact.erased` carrying a tombstone `{id, resource: "contact", deleted: true}`. Audit rows this process still holds
 * in memory are stored first, so they are redacted too.
 * @returns what was removed and redacted, counted in rows per store.
 * @throws ApiError `not_found` (404) when the contact is missing, already erased or another organisation's.
 */
export async function eraseContact(orgId: string, id: string, origin: WriteOrigin): Promise<ContactErasure> {
  await flushAudit();
  return transaction(async (tx) => {
    // Erasures of one organisation take turns: two rewriting the same event would otherwise each keep the other's
    // values, or wait for each other's rows in opposite orders.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${ERASURE_LOCK}), hashtext(${orgId}))`;
    const exists = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM "Contact" WHERE "orgId" = ${orgId} AND "id" = ${id}`;
    if (exists.length === 0) throw notFound("Contact", id);
    // A change of a custom field value names it `customFields.<key>` in `previous` (docs/api-contract.md §6.2).
    const customKeys = await tx.customField.findMany({ where: { orgId, resource: "contact" }, select: { key: true } });
    const fields = [...CONTACT_PERSONAL_FIELDS, ...customKeys.map(({ key }) => `customFields.${key}`)];

    const needles = await needlesOf(tx, orgId, id);
    const found = await search(tx, orgId, id, needles);
    if (!(await lockInOrder(tx, orgId, id, found.records))) throw notFound("Contact", id);
    const passes: Array<{ needles: Needles; found: Found }> = [{ needles, found }];
    // A write between the search and the lock may have given the contact new values: they are searched for now,
    // under the lock (their records are locked out of the order; the transaction helper retries a deadlock).
    const extra = added(needles, await needlesOf(tx, orgId, id));
    if (extra.values.length > 0) {
      const more = await search(tx, orgId, id, extra);
      await lockInOrder(tx, orgId, id, more.records);
      passes.push({ needles: extra, found: more });
    }

    const applied: Applied = {
      events: new Set(),
      attempts: new Set(),
      auditLogs: new Set(),
      idempotencyRecords: new Set(),
      records: new Set(),
    };
    for (const pass of passes) await redact(tx, orgId, id, fields, pass.needles, pass.found, applied);
    // Its own events, by structure, found under the lock so that none committed before it is missed.
    const ownEventIds = (
      await tx.$queryRaw<Array<{ id: string }>>`
        SELECT e."id" FROM "Event" AS e
        WHERE e."orgId" = ${orgId} AND e."resource" = 'contact' AND e."resourceId" = ${id}`
    ).map((event) => event.id);
    const own = await tx.$queryRaw<Array<{ id: string }>>`
      WITH locked AS (
        SELECT e."id", e."data", e."previous" FROM "Event" AS e
        WHERE e."id" = ANY(${ownEventIds}::text[])
        ORDER BY e."id" FOR UPDATE
      ), redacted AS MATERIALIZED (
        SELECT l."id", l."data" AS "dataBefore", l."previous" AS "previousBefore",
               "erase_jsonb"(l."data", ${id}, ${fields}::text[], NULL, '{}'::text[], true) AS "data",
               "erase_jsonb"(l."previous", ${id}, ${fields}::text[], NULL, '{}'::text[], true) AS "previous"
        FROM locked AS l
      )
      ${updateChanged("Event", ["data", "previous"])}`;
    for (const event of own) applied.events.add(event.id);
    // A receiver's answer to a delivery of the contact's own event may echo the payload: it is erased whole.
    const echoes = await tx.$queryRaw<Array<{ id: string }>>`
      UPDATE "DeliveryAttempt" AS a SET "responseBody" = ${ERASED}
      FROM "WebhookDelivery" AS d
      WHERE d."id" = a."deliveryId" AND d."orgId" = ${orgId} AND d."eventId" = ANY(${ownEventIds}::text[])
        AND a."responseBody" IS NOT NULL AND a."responseBody" <> ${ERASED}
      RETURNING a."id"::text AS "id"`;
    for (const attempt of echoes) applied.attempts.add(attempt.id);
    const [deliveries] = await tx.$queryRaw<Array<{ count: number }>>`
      SELECT count(*)::int AS "count" FROM "WebhookDelivery"
      WHERE "orgId" = ${orgId} AND "eventId" = ANY(${[...applied.events]}::text[])`;

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
        events: applied.events.size,
        webhookDeliveries: deliveries?.count ?? 0,
        deliveryAttempts: applied.attempts.size,
        auditLogs: applied.auditLogs.size,
        idempotencyRecords: applied.idempotencyRecords.size,
        customFieldRecords: applied.records.size,
      },
    };
  });
}
