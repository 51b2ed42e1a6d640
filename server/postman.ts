import { convertV2 } from "openapi-to-postmanv2";
import { openApiDocument } from "./openapi";

type Json = Record<string, unknown>;

const cache = new Map<string, Promise<Json>>();

async function build(baseUrl: string): Promise<Json> {
  const document = openApiDocument(baseUrl);
  const result = await new Promise<{ result: boolean; reason?: string; output?: Array<{ data: Json }> }>(
    (resolve, reject) => {
      convertV2(
        { type: "json", data: document },
        { folderStrategy: "Tags", requestNameSource: "Fallback" },
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
  return collection;
}

/**
 * The importable request collection (spec §1, §4.8): the OpenAPI document converted by `openapi-to-postmanv2`, with
 * collection variables `baseUrl` (this server's `/api/v1`) and `apiKey` used as the collection's Bearer auth. Cached per
 * base URL.
 * @throws Error when the converter refuses the document (a bug: the document is generated).
 */
export function postmanCollection(baseUrl: string): Promise<Json> {
  let collection = cache.get(baseUrl);
  if (!collection) {
    collection = build(baseUrl);
    collection.catch(() => cache.delete(baseUrl));
    cache.set(baseUrl, collection);
  }
  return collection;
}
