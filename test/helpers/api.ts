// Test helpers: a real HTTP server around the REST facade, and organisations with keys made through the services.
import { createSecretKey, randomBytes } from "node:crypto";
import { expect } from "vitest";
import { generateApiKey } from "../../server/platform/api-keys/format";
import { keyRecognition } from "../../server/platform/api-keys/recognition";
import { FULL_ACCESS_SCOPES } from "../../server/platform/api-keys/scopes";
import { createApiKey } from "../../server/platform/api-keys/service";
import { ensureOrganisation } from "../../server/platform/organisations";
import { CURSOR_KINDS, sealCursor } from "../../server/records/pagination";

export { startApi, type TestServer } from "./http-server";

/** Operator limits test organisations get unless a test asks for others: high enough never to rate-limit a test. */
export const TEST_ORG_LIMITS = { perKey: 100_000, perOrg: 100_000 } as const;

/**
 * A fresh organisation (unique slug) and one API key with the given scopes. Rate limits: {@link TEST_ORG_LIMITS}
 * unless `limits` names others (requests per minute), or `limits: null` keeps the plan's defaults (Starter 30/60).
 */
export async function createTestOrg(
  scopes: readonly string[] = FULL_ACCESS_SCOPES,
  options: { isTest?: boolean; limits?: { perKey: number; perOrg: number } | null } = {},
): Promise<{ orgId: string; slug: string; key: string; apiKeyId: string }> {
  const slug = `t-${randomBytes(6).toString("hex")}`;
  const limits = options.limits === undefined ? TEST_ORG_LIMITS : (options.limits ?? undefined);
  const org = await ensureOrganisation(slug, { limits });
  const { key, raw } = await createApiKey(org.id, { name: "test", scopes, isTest: options.isTest ?? false });
  return { orgId: org.id, slug, key: raw, apiKeyId: key.id };
}

/** Another key in an existing organisation. */
export async function createKey(orgId: string, scopes: readonly string[], isTest = false): Promise<string> {
  return (await createApiKey(orgId, { name: "test", scopes, isTest })).raw;
}

/**
 * A key no organisation has, with a valid checksum under this database's secret: one the service must look up to
 * refuse (docs/architecture.md, "API keys and the key cache").
 */
export async function unknownKey(isTest = false): Promise<string> {
  return generateApiKey(isTest, (await keyRecognition()).checksumSecret).raw;
}

/**
 * A key of the current format whose checksum is wrong (made under another secret; it passes ours with probability
 * 62^-8): what a client guessing keys, or sending another deployment's, presents.
 */
export function forgedKey(isTest = false): string {
  return generateApiKey(isTest, createSecretKey(randomBytes(32))).raw;
}

/** A minimal JSON client bound to a base URL and a key. */
export function client(baseUrl: string, key?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field with expect().
    const json: any = text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, body: json };
  };
}

/**
 * Pages through a list endpoint two records at a time under each sort and expects exactly the records of a single
 * 100-record page, in the same order: keyset pagination with neither gaps nor repeats (docs/api-contract.md §4.9).
 * Each page's `nextCursor` is the id (`key`) of its last record, and the signed cursor lists answered before for that
 * record continues with the same page (docs/api-contract.md §4.9.1). Requests ask for strict sort handling, so a sort
 * the list cannot apply fails the test instead of being ignored.
 */
export async function expectKeysetPaging(
  api: ReturnType<typeof client>,
  path: string,
  sorts: readonly string[],
  key = "id",
): Promise<void> {
  const strict = { Prefer: "handling=strict" };
  // A path may carry its own query (filters): the paging parameters join it.
  const joiner = path.includes("?") ? "&" : "?";
  for (const sort of sorts) {
    // "" stands for the default order: no sort parameter.
    const sortParam = sort ? `&sort=${sort}` : "";
    const all = (await api("GET", `${path}${joiner}limit=100${sortParam}`, undefined, strict)).body.data.map(
      (record: Record<string, string>) => record[key],
    );
    const seen: string[] = [];
    let cursor = "";
    for (let page = 0; page <= all.length; page++) {
      const url = (at: string) => `${path}${joiner}limit=2${sortParam}${at ? `&cursor=${at}` : ""}`;
      const res = await api("GET", url(cursor), undefined, strict);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data.map((record: Record<string, string>) => record[key]));
      if (cursor) {
        const signed = sealCursor(CURSOR_KINDS.text, Buffer.from(cursor, "utf8"));
        expect((await api("GET", url(signed), undefined, strict)).body.data, `sort=${sort} after ${cursor}`).toEqual(
          res.body.data,
        );
      }
      if (!res.body.hasMore) break;
      cursor = res.body.nextCursor;
      expect(cursor).toBe(String(res.body.data.at(-1)?.[key]));
    }
    expect(seen, `sort=${sort}`).toEqual(all);
  }
}
