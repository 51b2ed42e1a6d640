import { findUnstorableText } from "../contract/storable";
import { ApiError } from "../errors";
import type { ApiRequest, Step } from "./exchange";
import { BODY_METHODS } from "./routes";
import { parameterHint } from "./unknown-parameters";

/** Largest accepted request body: 1 MiB, in bytes. A bulk request of 500 items is about 150 KiB. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest accepted nesting of JSON objects and arrays; our deepest schema needs 4. */
export const MAX_JSON_DEPTH = 32;
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function tooLarge(): ApiError {
  return new ApiError(
    "payload_too_large",
    `Request body exceeds ${MAX_BODY_BYTES} bytes (1 MiB); send at most 500 items per bulk request`,
  );
}

/**
 * Whether JSON text nests brackets (outside strings) deeper than `limit`, stopping early once past it; linear in the
 * text. What keeps a parsed body's walks (`findPrototypeKey`, the schemas) off the stack's limit (docs/api-contract.md
 * §4.12).
 */
export function exceedsDepth(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The field name a request may never use (docs/api-contract.md §4.12): `JSON.parse` keeps `__proto__` as an own key,
 * but an object spread, an assignment or a zod schema takes it for the object's prototype and drops it without a word.
 */
const PROTOTYPE_KEY = "__proto__";

/**
 * Where the first `__proto__` key of a parsed JSON value is, at any depth (the path of keys and indexes); null when it
 * has none. Source: docs/api-contract.md §4.12.
 */
export function findPrototypeKey(value: unknown, path: string[] = []): string[] | null {
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findPrototypeKey(value[i], [...path, String(i)]);
      if (found) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key === PROTOTYPE_KEY) return [...path, key];
    const found = findPrototypeKey((value as Record<string, unknown>)[key], [...path, key]);
    if (found) return found;
  }
  return null;
}

/** The 422 of a `__proto__` field name at `path`. */
function prototypeKeyRefused(path: string[]): ApiError {
  const message = "is not accepted as a field name: JavaScript reads __proto__ as an object's prototype";
  return new ApiError("validation_error", `Request field ${path.join(".")} ${message}`, {
    details: [{ path, message }],
  });
}

/**
 * Reads a request body as one JSON object (docs/api-contract.md §2). An empty body is `{}`.
 * @returns the parsed object.
 * @throws ApiError `payload_too_large` (413) for a body over {@link MAX_BODY_BYTES} (a declared `Content-Length` over
 *         it is refused before reading) or nested deeper than {@link MAX_JSON_DEPTH}; `invalid_json` (400) for bytes
 *         that are not UTF-8 or text that is not JSON; `validation_error` (422) for JSON that is not an object, or
 *         that names a field `__proto__` at any depth (naming its path).
 */
export async function readJsonBody(request: ApiRequest): Promise<Record<string, unknown>> {
  if (Number(request.header("content-length")) > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await request.readBody(MAX_BODY_BYTES);
  if (bytes === null) throw tooLarge();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "Request body is not valid UTF-8");
  }
  if (text.trim() === "") return {};
  if (exceedsDepth(text)) {
    throw new ApiError("payload_too_large", `Request body nests JSON deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ApiError("invalid_json", `Request body is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ApiError("validation_error", "Request body must be a JSON object", {
      details: [{ path: [], message: "expected a JSON object" }],
    });
  }
  const prototypeKey = findPrototypeKey(parsed);
  if (prototypeKey) throw prototypeKeyRefused(prototypeKey);
  return parsed as Record<string, unknown>;
}

/** A query value as its schema's type when its text is one (`20` → 20, `true` → true), else the text as sent. */
function typedValue(type: "number" | "boolean" | undefined, text: string): unknown {
  if (type === "number" && NUMBER_TEXT.test(text)) return Number(text);
  if (type === "boolean" && (text === "true" || text === "false")) return text === "true";
  return text;
}

/**
 * Input: builds the operation's input from the body (POST, PATCH, PUT) or the query (other methods) plus the path
 * parameters. Query values of number and boolean fields are converted from their text (`limit=20` → 20,
 * `force=true` → true, exactly `true` or `false`); anything else stays text for the schema to judge.
 * @throws ApiError as {@link readJsonBody}; `validation_error` (422) when text holds what PostgreSQL cannot store (NUL,
 *         a lone surrogate), when a path parameter is repeated in the body or query, when a body method gets a query
 *         parameter its route does not declare (`meta.query`, e.g. `mode` of the bulk endpoints), or for a query
 *         parameter named `__proto__`.
 */
export const readInput: Step = async (exchange, next) => {
  const route = exchange.route;
  if (!route?.procedure) return next();
  let source: Record<string, unknown>;
  if (BODY_METHODS.has(exchange.method)) {
    const allowed = new Set(route.meta.query ?? []);
    const unknown = [...exchange.query.keys()].filter((name) => !allowed.has(name));
    if (unknown.length > 0) {
      throw new ApiError("validation_error", `${exchange.method} ${route.path} takes no such query parameter`, {
        details: unknown.map((name) => ({
          path: [name],
          message: `unknown query parameter; ${parameterHint(name, route.queryParams) ?? "send fields in the body"}`,
        })),
      });
    }
    const body = await readJsonBody(exchange.request);
    exchange.body = body;
    // The route's query fields (`?mode=partial`) join the body's; one sent in the body too is refused below.
    const fromQuery = Object.fromEntries([...exchange.query].filter(([name]) => allowed.has(name)));
    const twice = Object.keys(fromQuery).filter((name) => Object.hasOwn(body, name));
    if (twice.length > 0) {
      throw new ApiError("validation_error", "A query parameter is repeated in the body", {
        details: twice.map((name) => ({ path: [name], message: "is a query parameter; do not send it in the body" })),
      });
    }
    // Idempotency fingerprints cover the path with its query, so a replay needs the same mode.
    source = { ...body, ...fromQuery };
  } else {
    source = {};
    if (exchange.query.has(PROTOTYPE_KEY)) throw prototypeKeyRefused([PROTOTYPE_KEY]);
    for (const [name, value] of exchange.query) {
      source[name] = typedValue(route.typedQuery.get(name), value);
    }
  }
  const repeated = route.pathParams.filter((name) => Object.hasOwn(source, name));
  if (repeated.length > 0) {
    throw new ApiError("validation_error", "A path parameter is repeated in the request", {
      details: repeated.map((name) => ({
        path: [name],
        message: `is the path parameter {${name}}; do not send it in the ${BODY_METHODS.has(exchange.method) ? "body" : "query"}`,
      })),
    });
  }
  if (route.voidInput) {
    const fields = Object.keys(source);
    if (fields.length > 0) {
      throw new ApiError("validation_error", `${route.path} takes no parameters`, {
        details: fields.map((name) => ({ path: [name], message: "unknown parameter" })),
      });
    }
    return next();
  }
  const unstorable = findUnstorableText(source);
  if (unstorable) {
    throw new ApiError("validation_error", `Request field ${unstorable.path.join(".")} ${unstorable.message}`, {
      details: [unstorable],
    });
  }
  exchange.input = { ...source, ...exchange.pathParams };
  return next();
};
