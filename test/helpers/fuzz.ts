// Request generators for the property-based fuzz test, driven by the served OpenAPI document: values that
// follow each schema, values that break it, and the characters and numbers that broke the API before (NUL, lone
// surrogates, numbers past 2^53 and past a double, LIKE wildcards, broken percent-encoding).
import fc from "fast-check";

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema objects from the served document are walked generically.
export type JsonSchema = Record<string, any>;

/** Strings that PostgreSQL cannot store, that SQL treats specially, or that are long or odd. */
export const NASTY_STRINGS = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00",
  "%",
  "_",
  "%_\\",
  '\'; DROP TABLE "Account"; --',
  "😀",
  "",
  " ",
  "\n\t",
  "x".repeat(5_000),
  "2026-13-45T99:99:99Z",
  "NaN",
  "-0",
  "1e400",
] as const;

/** Numbers past every bound a schema may declare: beyond 2^53, beyond 2^63, fractions, negatives. */
export const NASTY_NUMBERS = [
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 63),
  2 ** 63,
  1e308,
  -1e308,
  0.1 + 0.2,
  -1,
  0,
  1.5,
  5e-324,
] as const;

/** A placeholder replaced in the JSON text by a number no double holds (`1e400`): JSON.stringify cannot write one. */
export const HUGE_NUMBER_TOKEN = "__HUGE_NUMBER__";

/** Any value that no schema field should accept as it is, and some that it should. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(...NASTY_STRINGS),
  fc.constantFrom<unknown>(...NASTY_NUMBERS),
  fc.constantFrom<unknown>(true, false, null, [], {}, [null], { nested: {} }, HUGE_NUMBER_TOKEN),
  fc.string({ unit: "binary", maxLength: 20 }),
);

function resolve(schema: JsonSchema, document: JsonSchema): JsonSchema {
  let current = schema;
  for (let i = 0; i < 10 && typeof current.$ref === "string"; i++) {
    const name = (current.$ref as string).replace("#/components/schemas/", "");
    current = document.components.schemas[name] as JsonSchema;
  }
  return current;
}

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === "date-time") {
    return fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T00:00:00Z"), noInvalidDate: true })
      .map((date) => date.toISOString());
  }
  if (schema.format === "date") {
    return fc
      .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T00:00:00Z"), noInvalidDate: true })
      .map((date) => date.toISOString().slice(0, 10));
  }
  if (schema.format === "email") {
    return fc
      .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), fc.stringMatching(/^[a-z]{1,10}$/))
      .map(([local, domain]) => `${local}@${domain}.example`);
  }
  if (schema.format === "uri") return fc.webUrl();
  const maxLength = Math.min(schema.maxLength ?? 40, 40);
  const minLength = Math.min(schema.minLength ?? 0, maxLength);
  if (typeof schema.pattern === "string") {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((text) => text.length >= minLength && text.length <= (schema.maxLength ?? Number.MAX_SAFE_INTEGER));
  }
  return fc.string({ minLength, maxLength });
}

/** Values of existing records by field name (`accountId` → account ids), so that generated bodies can pass. */
export type Known = Record<string, readonly string[]>;

/**
 * An arbitrary of values valid for `schema` (a JSON Schema of the served document, `$ref`s resolved in `document`):
 * objects with their required fields and some optional ones, numbers within bounds, strings matching their format or
 * pattern, arrays of at most 3 items.
 */
export function validValue(
  schema: JsonSchema,
  document: JsonSchema,
  depth = 0,
  known: Known = {},
): fc.Arbitrary<unknown> {
  const s = resolve(schema, document);
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const options = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (options) return fc.oneof(...options.map((option) => validValue(option, document, depth + 1, known)));
  if (Array.isArray(s.type)) {
    return fc.oneof(...(s.type as string[]).map((type) => validValue({ ...s, type }, document, depth + 1, known)));
  }
  switch (s.type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return fc.integer({
        min: Math.max(s.minimum ?? -1_000_000, -(2 ** 31)),
        max: Math.min(s.maximum ?? 1_000_000, 2 ** 31),
      });
    case "number": {
      const min = s.minimum ?? -1_000_000;
      const max = Math.min(s.maximum ?? 1_000_000, 1e9);
      if (s.multipleOf === 0.01)
        return fc.integer({ min: Math.ceil(min * 100), max: Math.floor(max * 100) }).map((n) => n / 100);
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    }
    case "string":
      return stringOf(s);
    case "array":
      return fc.array(validValue(s.items ?? {}, document, depth + 1, known), {
        minLength: Math.min(s.minItems ?? 0, 3),
        maxLength: Math.min(s.maxItems ?? 3, 3),
      });
    case "object": {
      if (depth > 4 || !s.properties) return fc.constant({});
      const properties = Object.fromEntries(
        Object.entries(s.properties as Record<string, JsonSchema>).map(([key, value]) => [
          key,
          known[key]?.length
            ? fc.oneof(
                { arbitrary: fc.constantFrom(...(known[key] as string[])), weight: 4 },
                validValue(value, document, depth + 1, known),
              )
            : validValue(value, document, depth + 1, known),
        ]),
      );
      return fc.record(properties, { requiredKeys: (s.required as string[] | undefined) ?? [] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/**
 * An arbitrary of bodies for an operation: valid ones, valid ones with one field replaced by a {@link nastyValue} (at
 * any depth of the first level), with a required field left out, with an unknown field, and arbitrary JSON.
 */
export function bodyValue(schema: JsonSchema, document: JsonSchema, known: Known = {}): fc.Arbitrary<unknown> {
  const valid = validValue(schema, document, 0, known);
  const s = resolve(schema, document);
  const keys = Object.keys(s.properties ?? {});
  const withNasty = keys.length
    ? fc
        .tuple(valid, fc.constantFrom(...keys), nastyValue)
        .map(([body, key, value]) => ({ ...(body as object), [key]: value }))
    : valid;
  const withoutRequired = (s.required as string[] | undefined)?.length
    ? fc.tuple(valid, fc.constantFrom(...(s.required as string[]))).map(([body, key]) => {
        const copy = { ...(body as Record<string, unknown>) };
        delete copy[key];
        return copy;
      })
    : valid;
  const withUnknown = fc
    .tuple(valid, fc.string({ minLength: 1, maxLength: 8 }), nastyValue)
    .map(([body, key, value]) => ({ ...(body as object), [`x${key}`]: value }));
  const nestedNasty = keys.length
    ? fc.tuple(valid, fc.constantFrom(...keys), nastyValue).map(([body, key, value]) => {
        const copy = { ...(body as Record<string, unknown>) };
        const inner = copy[key];
        if (Array.isArray(inner) && inner.length > 0 && typeof inner[0] === "object" && inner[0] !== null) {
          const [first, ...rest] = inner as Array<Record<string, unknown>>;
          const innerKey = Object.keys(first as object)[0] ?? "name";
          copy[key] = [{ ...first, [innerKey]: value }, ...rest];
        }
        return copy;
      })
    : valid;
  return fc.oneof(
    { arbitrary: valid, weight: 3 },
    { arbitrary: withNasty, weight: 4 },
    { arbitrary: nestedNasty, weight: 2 },
    { arbitrary: withoutRequired, weight: 1 },
    { arbitrary: withUnknown, weight: 1 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
  );
}

/** Raw query fragments that are not valid percent-encoding or that repeat a parameter. */
export const RAW_QUERY_TAILS = [
  "%",
  "%ZZ",
  "%C0%80",
  "%FF",
  "a=%E2%82",
  "limit=1&limit=2",
  "&&&",
  "=x",
  "%00=1",
] as const;

/** Raw path segments: encoded NUL and slash, broken encodings, dot segments, very long ids. */
export const RAW_PATH_SEGMENTS = [
  "%00",
  "%ZZ",
  "%C0%80",
  "%2e%2e",
  "..",
  ".",
  "%2F",
  "a%00b",
  "%F0%9F%98%80",
  "x".repeat(300),
  "-",
  "%20",
] as const;
