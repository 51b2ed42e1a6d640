import { openApiDocument } from "./openapi";

type Json = Record<string, unknown>;

// Collections per public origin (see openapi.ts); the oldest is dropped past this many.
const MAX_CACHED_ORIGINS = 16;
const cache = new Map<string, Promise<string>>();

async function build(baseUrl: string): Promise<string> {
  // Loaded on the first request for a collection: the converter takes about 0.5 s of CPU to import at start-up.
  const { convertV2 } = await import("openapi-to-postmanv2");
  // A copy of its own: the converter changes the document it is given (issue #11 D).
  const document = openApiDocument(baseUrl);
  const result = await new Promise<{ result: boolean; reason?: string; output?: Array<{ data: Json }> }>(
    (resolve, reject) => {
      convertV2(
        { type: "json", data: document },
        {
          folderStrategy: "Tags",
          requestNameSource: "Fallback",
          // Bodies and parameter values from the documented examples, not made-up values (issue #11 D).
          parametersResolution: "Example",
          // Optional query parameters are listed but off, so each request runs as it stands.
          enableOptionalParameters: false,
          // Every request uses the collection's Bearer {{apiKey}}; none overrides it with a variable of its own.
          alwaysInheritAuthentication: true,
        },
        (error, converted) => (error ? reject(error) : resolve(converted as never)),
      );
    },
  );
  const collection = result.output?.[0]?.data;
  if (!result.result || !collection)
    throw new Error(`OpenAPI to Postman conversion failed: ${result.reason ?? "no output"}`);
  const variables = ((collection.variable as Json[] | undefined) ?? []).filter(
    (v) => v.key !== "baseUrl" && v.key !== "apiKey",
  );
  collection.variable = [
    { key: "baseUrl", value: `${baseUrl}/api/v1`, type: "string" },
    { key: "apiKey", value: "msp_test_replace_me", type: "string" },
    ...variables,
  ];
  collection.auth = { type: "bearer", bearer: [{ key: "token", value: "{{apiKey}}", type: "string" }] };
  return JSON.stringify(collection);
}

/**
 * The importable request collection (spec §1, §4.8): the OpenAPI document converted by `openapi-to-postmanv2`, with
 * collection variables `baseUrl` (this server's `/api/v1`) and `apiKey` used as the collection's Bearer auth. Cached per
 * base URL.
 * @throws Error when the converter refuses the document (a bug: the document is generated).
 */
export function postmanText(baseUrl: string): Promise<string> {
  let collection = cache.get(baseUrl);
  if (!collection) {
    collection = build(baseUrl);
    collection.catch(() => cache.delete(baseUrl));
    if (cache.size >= MAX_CACHED_ORIGINS) cache.delete(cache.keys().next().value as string);
    cache.set(baseUrl, collection);
  }
  return collection;
}
