// Search in the benchmark (docs/architecture.md, "Search"): quick search and structured search on an organisation of
// 100,000 accounts against one of 1,000 (targets ≤ 2×: an index lookup, not a scan), what a query matching every
// record costs, the index's size, and what keeping it costs a write (the triggers on and off, in the same database).
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { median, send } from "./load";

/** One comparison of the large organisation with the small one, medians in ms (docs/architecture.md, "Search"). */
export interface SearchCase {
  largeMs: number;
  smallMs: number;
  ratio: number;
}

/** What `measureSearch` reports (docs/architecture.md, "Search"); times in ms, sizes in MB. */
export interface SearchResult {
  largeAccounts: number;
  smallAccounts: number;
  /** `GET /search?q=zephyr den`: 10 matches in each organisation. */
  quick: SearchCase;
  /** `GET /search?q=zephir dental`: nothing matches as written, so the typo-tolerant search answers. */
  fuzzy: SearchCase;
  /** `POST /accounts/search`, two filters ANDed and a second group, first page of 50. */
  structured: SearchCase;
  /** `GET /search?q=account`: a word every account has; its cost follows the number of matches. */
  broad: SearchCase;
  /** Entries and on-disk sizes (MB) after the seeding, with the bytes one entry takes across table and indexes. */
  index: { entries: number; tableMb: number; documentIndexMb: number; fuzzyIndexMb: number; bytesPerEntry: number };
  /** INSERT of 500 accounts in one statement and UPDATE of one account's name, with the triggers on and off (ms). */
  writes: { bulkOnMs: number; bulkOffMs: number; oneOnMs: number; oneOffMs: number };
}

const SMALL_ACCOUNTS = 1_000;
const DISTINCT = 10;

/** Adds `count` accounts named like the bench's seed ("Account i") and ten "Zephyr Dental i" to an organisation. */
async function seed(client: pg.Client, orgId: string, count: number, tag: string): Promise<void> {
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "employeeCount", "domain", "createdAt", "updatedAt")
     SELECT 's_' || $3 || '_' || i, $1, 'Account ' || i,
            (ARRAY['PROSPECT','ACTIVE','AT_RISK','CHURNED']::"LifecycleStatus"[])[1 + i % 4], (i * 37) % 5000,
            'acct' || i || '.example.com', TIMESTAMP '2024-01-01' + i * INTERVAL '1 second', now()
     FROM generate_series(1, $2::int) AS i`,
    [orgId, count, tag],
  );
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "createdAt", "updatedAt")
     SELECT 'z_' || $2 || '_' || i, $1, 'Zephyr Dental ' || i, 'ACTIVE', now(), now() FROM generate_series(1, $3::int) AS i`,
    [orgId, tag, DISTINCT],
  );
}

/** Median of `runs` timed statements (after `warmup`), each in a transaction rolled back afterwards. */
async function timedWrite(client: pg.Client, sql: string, params: unknown[], runs: number, triggers: boolean) {
  const samples: number[] = [];
  for (let run = 0; run < runs + 2; run++) {
    await client.query("BEGIN");
    // A superuser's session can switch triggers off for itself alone (the bench connects as one).
    if (!triggers) await client.query("SET LOCAL session_replication_role = replica");
    const started = performance.now();
    await client.query(sql, params);
    const ms = performance.now() - started;
    await client.query("ROLLBACK");
    if (run >= 2) samples.push(ms);
  }
  return median(samples);
}

/**
 * Measures search against the `npm start` server at `origin`. The large organisation is the bench's 100,000 paged
 * accounts (`large`, its key reads accounts); a small one of 1,000 is made here through the services; both get ten
 * "Zephyr Dental" accounts. Requests alternate between the two organisations, one connection, `warmup` rounds left out.
 */
export async function measureSearch(options: {
  origin: string;
  client: pg.Client;
  large: { orgId: string; key: string; accounts: number };
  runs: number;
  warmup: number;
  log: (line: string) => void;
}): Promise<SearchResult> {
  const { client, origin, log } = options;
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createApiKey } = await import("../server/platform/api-keys/service");
  const tag = randomBytes(4).toString("hex");
  const small = await ensureOrganisation(`bench-search-${tag}`, {
    name: "Bench search",
    limits: { perKey: 1_000_000_000, perOrg: 1_000_000_000 },
  });
  const smallKey = (await createApiKey(small.id, { name: "bench", scopes: ["accounts:read"], isTest: false })).raw;
  await seed(client, small.id, SMALL_ACCOUNTS, `small${tag}`);
  await seed(client, options.large.orgId, 0, `large${tag}`);
  await client.query(`ANALYZE "SearchEntry"`);
  await client.query(`ANALYZE "Account"`);

  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const keys = { large: options.large.key, small: smallKey };
  const request = async (size: "large" | "small", path: string, body: unknown, minimum: number) => {
    const response = await send(agent, `${origin}/api/v1${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${keys[size]}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const data = response.status === 200 ? (JSON.parse(response.body) as { data: unknown[] }).data : undefined;
    if (!data || data.length < minimum) {
      throw new Error(`${path} (${size}) answered ${response.status}: ${response.body.slice(0, 300)}`);
    }
    return response.ms;
  };
  const compare = async (label: string, path: string, body: unknown, minimum: number): Promise<SearchCase> => {
    const large: number[] = [];
    const smallTimes: number[] = [];
    for (let round = 1; round <= options.warmup + options.runs; round++) {
      const a = await request("large", path, body, minimum);
      const b = await request("small", path, body, minimum);
      if (round <= options.warmup) continue;
      large.push(a);
      smallTimes.push(b);
    }
    const result = { largeMs: median(large), smallMs: median(smallTimes), ratio: median(large) / median(smallTimes) };
    log(
      `search: ${label}: ${options.large.accounts.toLocaleString("en")} accounts ${result.largeMs.toFixed(2)} ms, ${SMALL_ACCOUNTS.toLocaleString("en")} accounts ${result.smallMs.toFixed(2)} ms (${result.ratio.toFixed(2)}x)`,
    );
    return result;
  };

  const quick = await compare("GET /search?q=zephyr den", "/search?q=zephyr%20den", undefined, DISTINCT);
  const fuzzy = await compare("GET /search?q=zephir dental (typo)", "/search?q=zephir%20dental", undefined, 1);
  const structured = await compare(
    "POST /accounts/search",
    "/accounts/search",
    {
      filterGroups: [
        {
          filters: [
            { field: "lifecycleStatus", operator: "eq", value: "ACTIVE" },
            { field: "employeeCount", operator: "between", value: [100, 2000] },
          ],
        },
        { filters: [{ field: "name", operator: "eq", value: "Zephyr Dental 1" }] },
      ],
      limit: 50,
    },
    50,
  );
  const broad = await compare("GET /search?q=account (every record matches)", "/search?q=account", undefined, 20);
  agent.destroy();

  const sizes = await client.query<{ entries: string; table: string; document: string; fuzzy: string }>(
    `SELECT (SELECT count(*) FROM "SearchEntry") AS "entries",
            pg_total_relation_size('"SearchEntry"') - pg_indexes_size('"SearchEntry"') AS "table",
            pg_relation_size('"SearchEntry_orgId_document_idx"') AS "document",
            pg_relation_size('"SearchEntry_orgId_fuzzy_idx"') AS "fuzzy"`,
  );
  const row = sizes.rows[0] as { entries: string; table: string; document: string; fuzzy: string };
  const mb = (bytes: string) => Number(bytes) / 2 ** 20;
  const index = {
    entries: Number(row.entries),
    tableMb: mb(row.table),
    documentIndexMb: mb(row.document),
    fuzzyIndexMb: mb(row.fuzzy),
    bytesPerEntry: (Number(row.table) + Number(row.document) + Number(row.fuzzy)) / Number(row.entries),
  };
  log(
    `search: ${index.entries.toLocaleString("en")} entries: table ${index.tableMb.toFixed(1)} MB, words index ${index.documentIndexMb.toFixed(1)} MB, trigram index ${index.fuzzyIndexMb.toFixed(1)} MB (${index.bytesPerEntry.toFixed(0)} bytes an entry)`,
  );

  const bulkSql = `INSERT INTO "Account" ("id", "orgId", "name", "domain", "externalId", "createdAt", "updatedAt")
    SELECT 'w_' || $2 || '_' || i, $1, 'Written ' || i || ' Holdings', 'w' || i || '.example.com', 'w-' || i, now(), now()
    FROM generate_series(1, 500) AS i`;
  const oneSql = `UPDATE "Account" SET "name" = 'Zephyr Dental renamed', "updatedAt" = now() WHERE "id" = $1`;
  const runs = Math.max(options.runs, 10);
  const writes = {
    bulkOnMs: await timedWrite(client, bulkSql, [small.id, tag], runs, true),
    bulkOffMs: await timedWrite(client, bulkSql, [small.id, tag], runs, false),
    oneOnMs: await timedWrite(client, oneSql, [`z_small${tag}_1`], runs, true),
    oneOffMs: await timedWrite(client, oneSql, [`z_small${tag}_1`], runs, false),
  };
  log(
    `search: keeping the index: INSERT of 500 accounts ${writes.bulkOnMs.toFixed(1)} ms with it, ${writes.bulkOffMs.toFixed(1)} ms without; UPDATE of one name ${writes.oneOnMs.toFixed(2)} ms with it, ${writes.oneOffMs.toFixed(2)} ms without`,
  );
  return {
    largeAccounts: options.large.accounts,
    smallAccounts: SMALL_ACCOUNTS,
    quick,
    fuzzy,
    structured,
    broad,
    index,
    writes,
  };
}
