import { ApiError } from "../errors";

/** Largest accepted request body: 1 MiB, in bytes. A bulk request of 500 items is about 150 KiB. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest accepted nesting of JSON objects and arrays; our deepest schema needs 4. */
export const MAX_JSON_DEPTH = 32;

function tooLarge(): ApiError {
  return new ApiError(
    "payload_too_large",
    `Request body exceeds ${MAX_BODY_BYTES} bytes (1 MiB); send at most 500 items per bulk request`,
  );
}

/** Reads the body as text, refusing it as soon as it passes the limit, so a huge body is never held in memory. */
async function readLimitedText(req: Request): Promise<string> {
  const declared = Number(req.headers.get("content-length"));
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString("utf8");
}

/** Deepest bracket nesting outside strings, stopping early once past the limit; linear in the text. */
function exceedsDepth(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

/**
 * Reads a request body as one JSON object (spec §2). An empty body is `{}`.
 * @returns `{ ok: true, body }`, or `{ ok: false, error }` with `payload_too_large` (413) for a body over
 *          {@link MAX_BODY_BYTES} or nested deeper than {@link MAX_JSON_DEPTH}, `invalid_json` (400) for text that is
 *          not JSON, and `validation_error` (422) for JSON that is not an object.
 */
export async function readJsonBody(req: Request): Promise<{ ok: true; body: object } | { ok: false; error: ApiError }> {
  let text: string;
  try {
    text = await readLimitedText(req);
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, error };
    throw error;
  }
  if (text.trim() === "") return { ok: true, body: {} };
  if (exceedsDepth(text)) {
    return {
      ok: false,
      error: new ApiError("payload_too_large", `Request body nests JSON deeper than ${MAX_JSON_DEPTH} levels`),
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      error: new ApiError("invalid_json", `Request body is not valid JSON: ${(error as Error).message}`),
    };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return {
      ok: false,
      error: new ApiError("validation_error", "Request body must be a JSON object", {
        details: [{ path: [], message: "expected a JSON object" }],
      }),
    };
  }
  return { ok: true, body: parsed };
}
