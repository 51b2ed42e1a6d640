// What a tool result holds, shaped for a model (docs/api-contract.md §10.4): compact JSON, the text outsiders wrote
// moved into one fenced field, long text cut with a marker, and every result under a size a model's context takes.

/**
 * Most characters of a tool result's JSON text: 60,000, about 20,000 tokens at 3 characters a token (JSON with ids
 * and numbers counts about that; English prose about 4), under the 25,000 tokens Claude Code accepts from a tool.
 */
export const MAX_RESULT_CHARS = 60_000;

/** The field that holds every text outsiders wrote, so a model can tell data from instructions. */
export const UNTRUSTED_FIELD = "untrusted_text";

/**
 * The free-text fields of each record type that people outside the MSP can write (a customer's email pasted into a
 * note, a ticket's subject synced from a PSA): moved into {@link UNTRUSTED_FIELD}. Custom field values that are text
 * are moved there too, under `customFields`.
 */
const FREE_TEXT: Readonly<Record<string, readonly string[]>> = {
  note: ["body"],
  touchpoint: ["subject", "notes"],
  task: ["description"],
};

/** Text longer than `max` characters, cut there with a marker saying how much was left out. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}…[cut: ${text.length - max} more characters]`;
}

/**
 * A record as a tool returns it: its free text ({@link FREE_TEXT}) and text custom field values moved into
 * `untrusted_text` (absent when there is none), each cut at `maxText` characters; every other field as the API
 * answered it. An `account` the API expanded is projected the same way.
 * @param type the record's type (`account`, `contact`, `deal`, `device`, `task`, `note`, `touchpoint`).
 */
export function projectRecord(type: string, record: Record<string, unknown>, maxText: number): Record<string, unknown> {
  const projected: Record<string, unknown> = {};
  const untrusted: Record<string, unknown> = {};
  const freeText = FREE_TEXT[type] ?? [];
  for (const [name, value] of Object.entries(record)) {
    if (freeText.includes(name)) {
      if (typeof value === "string") untrusted[name] = cutText(value, maxText);
      continue;
    }
    if (name === "customFields" && value && typeof value === "object") {
      const kept: Record<string, unknown> = {};
      const text: Record<string, string> = {};
      for (const [key, field] of Object.entries(value)) {
        if (typeof field === "string") text[key] = cutText(field, maxText);
        else kept[key] = field;
      }
      projected.customFields = kept;
      if (Object.keys(text).length > 0) untrusted.customFields = text;
      continue;
    }
    if (name === "account" && value && typeof value === "object") {
      projected.account = projectRecord("account", value as Record<string, unknown>, maxText);
      continue;
    }
    projected[name] = value;
  }
  if (Object.keys(untrusted).length > 0) projected[UNTRUSTED_FIELD] = untrusted;
  return projected;
}

/** The length of a value's compact JSON text. */
export function jsonLength(value: unknown): number {
  return JSON.stringify(value).length;
}

/** The lengths text is cut at, from `start` down, halving, to 100 characters. */
export function* textCuts(start: number): Generator<number> {
  let maxText = start;
  for (;;) {
    yield maxText;
    if (maxText <= 100) return;
    maxText = Math.max(100, Math.floor(maxText / 2));
  }
}

/**
 * The first of `candidates` (built lazily, from the fullest to the most cut) whose JSON is within
 * {@link MAX_RESULT_CHARS}.
 * @returns it with `fits: true`, or the last candidate with `fits: false` (the caller then asks for less).
 */
export function firstFitting<T>(candidates: Iterable<T>): { result: T; fits: boolean } {
  let last: T | undefined;
  for (const candidate of candidates) {
    if (jsonLength(candidate) <= MAX_RESULT_CHARS) return { result: candidate, fits: true };
    last = candidate;
  }
  if (last === undefined) throw new Error("firstFitting needs at least one candidate");
  return { result: last, fits: false };
}

/** `build` applied to each of {@link textCuts}`(start)`, lazily. */
export function* withTextCuts<T>(start: number, build: (maxText: number) => T): Generator<T> {
  for (const maxText of textCuts(start)) yield build(maxText);
}
