// Test helpers for the erasure of a person (docs/api-contract.md §4.16): the spellings a stored copy may hold a value
// in, a scan of every text and JSON column of every table for them, and a contact with a long history written through
// the API.
import { expect } from "vitest";
import { prisma } from "../../server/db/transaction";
import type { client } from "./api";

type Api = ReturnType<typeof client>;

/**
 * The spellings a stored copy could hold a value in: as written, lower and upper case, percent-encoded
 * (`encodeURIComponent`), form-encoded (`URLSearchParams`, `+` for a space), JSON-escaped, and decomposed (NFD).
 */
export function spellings(value: string): string[] {
  return [
    ...new Set([
      value,
      value.toLowerCase(),
      value.toUpperCase(),
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice("v=".length),
      JSON.stringify(value).slice(1, -1),
      value.normalize("NFD"),
      value.normalize("NFC"),
    ]),
  ];
}

/** Every text, character varying, json, jsonb, tsvector and text-array column of every table of the schema. */
async function storedTextColumns(): Promise<Array<{ table: string; column: string }>> {
  return prisma().$queryRaw<Array<{ table: string; column: string }>>`
    SELECT c.table_name AS "table", c.column_name AS "column"
    FROM information_schema.columns AS c
    JOIN information_schema.tables AS t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      AND (c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'tsvector')
        OR (c.data_type = 'ARRAY' AND c.udt_name IN ('_text', '_varchar')))
    ORDER BY 1, 2`;
}

/**
 * Scans every text and JSON column of every table (the search index's tsvector and text arrays as text) for each
 * needle as a plain substring, except the columns in `kept` (`"Table.column"`).
 * @returns `"Table.column: needle"` for each needle found, sorted.
 */
export async function storedCopies(needles: readonly string[], kept: readonly string[] = []): Promise<string[]> {
  const found: string[] = [];
  for (const { table, column } of await storedTextColumns()) {
    if (kept.includes(`${table}.${column}`)) continue;
    // Names from the catalogue, never from input.
    const rows = await prisma().$queryRawUnsafe<Array<{ needle: string }>>(
      `SELECT DISTINCT n AS "needle" FROM "${table}" AS r, unnest($1::text[]) AS n
       WHERE strpos(r."${column}"::text, n) > 0`,
      [...needles],
    );
    for (const row of rows) found.push(`${table}.${column}: ${row.needle}`);
  }
  return found.sort();
}

/** One state of a contact's identifying fields. */
export interface ContactState {
  email: string;
  firstName: string;
  lastName: string;
  phone: string;
}

/** A word of 8 letters for `n` and `salt`: different numbers give different words (practically). */
function wordOf(n: number, salt: number): string {
  let x = (n * 2_654_435_761 + salt * 40_503) >>> 0;
  let text = "";
  for (let i = 0; i < 8; i++) {
    text += String.fromCharCode(97 + (x % 26));
    x = Math.floor(x / 26) + i * 7_919;
  }
  return text;
}

/**
 * The n-th of distinct states: a name, an email and a phone number sharing no word with another state's (but the
 * email's tag and domain), so that no few words cover them and an erasure reads every stored row's words.
 */
export function nthState(tag: string, n: number): ContactState {
  return {
    email: `${wordOf(n, 1)}.${tag}@harbor.example`,
    firstName: wordOf(n, 3),
    lastName: wordOf(n, 4),
    phone: `+${100_000_000 + n * 7_919}`,
  };
}

/**
 * Gives a contact `count` historical states through the API, as a client would: each a PATCH with an Idempotency-Key
 * (so an event and a stored answer per state), every tenth followed by a lookup of that email in a query string.
 * Requests run `parallel` at a time (the PATCHes of one contact take turns on its row).
 */
export async function writeHistory(
  api: Api,
  contactId: string,
  tag: string,
  count: number,
  parallel = 4,
): Promise<ContactState[]> {
  const states = Array.from({ length: count }, (_, index) => nthState(tag, index + 1));
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) {
      const state = states[index] as ContactState;
      const res = await api("PATCH", `/contacts/${contactId}`, state, { "Idempotency-Key": `${tag}-${index}` });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      if (index % 10 === 0) {
        expect((await api("GET", `/contacts?email=${encodeURIComponent(state.email)}`)).status).toBe(200);
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return states;
}
