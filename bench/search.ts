// Search in the benchmark (docs/architecture.md, "Search"): quick search and structured search on organisations of
// 1,000, 100,000 and 1,000,000 accounts (target: 1,000,000 within 1.5× of 1,000: index lookups, not scans), quick
// search again right after a bulk write of 100,000 accounts before any vacuum, what a query matching every record
// costs, the index's size, and what keeping it costs a write (the triggers on and off, in the same database).
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import { performance } from "node:perf_hooks";
import type pg from "pg";
import { median, send } from "./load";

/** The organisations' sizes, in accounts (docs/architecture.md, "Search"). */
export const SEARCH_SIZES = { small: 1_000, medium: 100_000, large: 1_000_000 } as const;
type Size = keyof typeof SEARCH_SIZES;
const ORDER: readonly Size[] = ["small", "medium", "large"];

/**
 * One request measured on each organisation (docs/architecture.md, "Search"): medians in ms by size (NaN for a size
 * not measured), and the large one's over the small one's.
 */
export interface SearchCase {
  ms: Record<Size, number>;
  ratio: number;
}

/** What `measureSearch` reports (docs/architecture.md, "Search"); times in ms, sizes in MB. */
export interface SearchResult {
  sizes: typeof SEARCH_SIZES;
  /** `GET /search?q=zephyr den`: 10 matches in each organisation. */
  quick: SearchCase;
  /** `GET /search?q=xylophone`: nothing matches, as written or as a typo (both searches run). */
  none: SearchCase;
  /** `GET /search?q=zephir dental`: nothing matches as written, so the typo-tolerant search answers. */
  fuzzy: SearchCase;
  /** `POST /accounts/search`, three groups ORed (indexed columns, a custom field), 20 matches at every size. */
  structured: SearchCase;
  /** `GET /search?q=account`: a word every account has; its cost follows the number of matches (1,000 vs 100,000). */
  broad: { smallMs: number; mediumMs: number };
  /** The three quick searches right after 100,000 accounts were written to the large organisation, before a vacuum. */
  afterWrite: { written: number; quick: SearchCase; none: SearchCase; fuzzy: SearchCase };
  /**
   * The small organisation's search for a word it lacks and the large one wrote 100,000 times (`holdings`), against
   * one no organisation has (`xylophone`), after that write: what another organisation's posting lists cost it.
   */
  neighbour: { commonElsewhereMs: number; nowhereMs: number };
  /** Entries and on-disk sizes (MB) after the seeding, with the bytes one entry takes across table and indexes. */
  index: { entries: number; tableMb: number; documentIndexMb: number; fuzzyIndexMb: number; bytesPerEntry: number };
  /** INSERT of 500 accounts in one statement and UPDATE of one account's name, with the triggers on and off (ms). */
  writes: { bulkOnMs: number; bulkOffMs: number; oneOnMs: number; oneOffMs: number };
}

const DISTINCT = 10;
const SEED_CHUNK = 100_000;
const WRITTEN = 100_000;
const WRITE_BATCH = 500;

/**
 * The structured search measured: an OR of a group of two indexed columns, a group of one and a custom field's
 * equality; the seed gives it 8 + 8 + 4 matches at every size.
 */
const STRUCTURED = {
  filterGroups: [
    {
      filters: [
        { field: "lifecycleStatus", operator: "eq", value: "AT_RISK" },
        { field: "employeeCount", operator: "between", value: [400, 600] },
      ],
    },
    { filters: [{ field: "employeeCount", operator: "gte", value: 90000 }] },
    { filters: [{ field: "customFields.tier", operator: "eq", value: "platinum" }] },
  ],
  limit: 50,
};
const STRUCTURED_MATCHES = 20;

/**
 * Adds `count` accounts named like the bench's seed ("Account i") to an organisation, in statements of 100,000 (the
 * search triggers index them), and the rows the searches find: ten "Zephyr Dental i", and the structured search's 20.
 * Filler accounts have every lifecycle status and employee counts below 50,000, those in 400–600 never at risk, and
 * every tenth a `tier` of gold: the structured groups match none of them.
 */
async function seed(client: pg.Client, orgId: string, count: number, tag: string): Promise<void> {
  for (let from = 1; from <= count; from += SEED_CHUNK) {
    await client.query(
      `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "employeeCount", "domain", "customFields", "createdAt", "updatedAt")
       SELECT 's_' || $2 || '_' || i, $1, 'Account ' || i,
              (ARRAY['PROSPECT','ACTIVE','AT_RISK','CHURNED']::"LifecycleStatus"[])[1 + i % 4],
              CASE WHEN i % 4 = 2 AND (i * 37) % 50000 BETWEEN 400 AND 600 THEN 1000 ELSE (i * 37) % 50000 END,
              'acct' || i || '.example.com',
              CASE WHEN i % 10 = 0 THEN '{"tier":"gold"}' ELSE '{}' END::jsonb,
              TIMESTAMP '2024-01-01' + i * INTERVAL '1 second', now()
       FROM generate_series($3::int, $4::int) AS i`,
      [orgId, tag, from, Math.min(count, from + SEED_CHUNK - 1)],
    );
  }
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "employeeCount", "customFields", "createdAt", "updatedAt")
     SELECT 'z_' || $2 || '_' || i, $1, 'Zephyr Dental ' || i, 'ACTIVE', NULL, '{}', now(), now()
     FROM generate_series(1, $3::int) AS i
     UNION ALL
     SELECT 'g_' || $2 || '_' || i, $1, 'Structured ' || i,
            CASE WHEN i <= 8 THEN 'AT_RISK' ELSE 'ACTIVE' END::"LifecycleStatus",
            CASE WHEN i <= 8 THEN 400 + i * 25 WHEN i <= 16 THEN 90000 + i ELSE 20 END,
            CASE WHEN i > 16 THEN '{"tier":"platinum"}' ELSE '{}' END::jsonb,
            now(), now()
     FROM generate_series(1, $4::int) AS i`,
    [orgId, tag, DISTINCT, STRUCTURED_MATCHES],
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
 * Measures search against the `npm start` server at `origin` on three organisations it seeds with SQL
 * (`generate_series`): 1,000, 100,000 and 1,000,000 accounts, each with ten "Zephyr Dental" accounts, the structured
 * search's 20 matches and a `tier` custom field. Requests go round the three organisations, one connection, `warmup`
 * rounds left out. Then 100,000 accounts are written to the large organisation, 500 a statement as bulk upserts
 * write them, with autovacuum off on the two tables, and quick search is measured again before any vacuum, with the
 * small organisation's search for the word the write gave 100,000 accounts.
 */
export async function measureSearch(options: {
  origin: string;
  client: pg.Client;
  runs: number;
  warmup: number;
  log: (line: string) => void;
}): Promise<SearchResult> {
  const { client, origin, log } = options;
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createApiKey } = await import("../server/platform/api-keys/service");
  const { createCustomField } = await import("../server/records/custom-fields/service");
  const { SEED_ORIGIN } = await import("../server/records/events");
  const tag = randomBytes(4).toString("hex");
  const orgs = {} as Record<Size, { id: string; key: string }>;
  for (const size of ORDER) {
    const started = performance.now();
    const org = await ensureOrganisation(`bench-search-${size}-${tag}`, {
      name: `Bench search ${size}`,
      limits: { perKey: 1_000_000_000, perOrg: 1_000_000_000 },
    });
    const key = (await createApiKey(org.id, { name: "bench", scopes: ["accounts:read"], isTest: false })).raw;
    await createCustomField(
      org.id,
      {
        resource: "account",
        key: "tier",
        label: "Tier",
        type: "select",
        options: [
          { value: "gold", label: "Gold" },
          { value: "platinum", label: "Platinum" },
        ],
      },
      SEED_ORIGIN,
    );
    await seed(client, org.id, SEARCH_SIZES[size], `${size}${tag}`);
    orgs[size] = { id: org.id, key };
    log(
      `search: seeded ${SEARCH_SIZES[size].toLocaleString("en")} accounts in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  }
  await client.query(`VACUUM ANALYZE "SearchEntry"`);
  await client.query(`VACUUM ANALYZE "Account"`);

  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const request = async (size: Size, path: string, body: unknown, expected: readonly [number, number]) => {
    const response = await send(agent, `${origin}/api/v1${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${orgs[size].key}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const data = response.status === 200 ? (JSON.parse(response.body) as { data: unknown[] }).data : undefined;
    if (!data || data.length < expected[0] || data.length > expected[1]) {
      throw new Error(`${path} (${size}) answered ${response.status}: ${response.body.slice(0, 300)}`);
    }
    return response.ms;
  };
  const compare = async (
    label: string,
    path: string,
    body: unknown,
    expected: readonly [number, number],
    sizes: readonly Size[] = ORDER,
    runs = options.runs,
  ): Promise<SearchCase> => {
    const samples = { small: [], medium: [], large: [] } as Record<Size, number[]>;
    for (let round = 1; round <= options.warmup + runs; round++) {
      for (const size of sizes) {
        const ms = await request(size, path, body, expected);
        if (round > options.warmup) samples[size].push(ms);
      }
    }
    const ms = { small: median(samples.small), medium: median(samples.medium), large: median(samples.large) };
    const result = { ms, ratio: ms.large / ms.small };
    log(
      `search: ${label}: ${sizes.map((size) => `${SEARCH_SIZES[size].toLocaleString("en")} ${ms[size].toFixed(2)} ms`).join(", ")}${sizes.includes("large") ? ` (${result.ratio.toFixed(2)}x)` : ""}`,
    );
    return result;
  };

  const quickCases = async (when: string) => ({
    quick: await compare(`GET /search?q=zephyr den${when}`, "/search?q=zephyr%20den", undefined, [DISTINCT, DISTINCT]),
    none: await compare(`GET /search?q=xylophone (no match)${when}`, "/search?q=xylophone", undefined, [0, 0]),
    fuzzy: await compare(`GET /search?q=zephir dental (typo)${when}`, "/search?q=zephir%20dental", undefined, [1, 20]),
  });
  const { quick, none, fuzzy } = await quickCases("");
  const structured = await compare("POST /accounts/search (3 groups)", "/accounts/search", STRUCTURED, [
    STRUCTURED_MATCHES,
    STRUCTURED_MATCHES,
  ]);
  // A word every account has costs in proportion to its matches: measured where that stays short.
  const broadCase = await compare(
    "GET /search?q=account (every record matches)",
    "/search?q=account",
    undefined,
    [20, 20],
    ["small", "medium"],
    Math.min(options.runs, 10),
  );
  const broad = { smallMs: broadCase.ms.small, mediumMs: broadCase.ms.medium };

  // Right after a bulk write, before any vacuum: autovacuum would otherwise tidy up at a time of its choosing.
  await client.query(`ALTER TABLE "SearchEntry" SET (autovacuum_enabled = off)`);
  await client.query(`ALTER TABLE "Account" SET (autovacuum_enabled = off)`);
  const writeStarted = performance.now();
  for (let from = 1; from <= WRITTEN; from += WRITE_BATCH) {
    await client.query(
      `INSERT INTO "Account" ("id", "orgId", "name", "domain", "externalId", "createdAt", "updatedAt")
       SELECT 'b_' || $2 || '_' || i, $1, 'Written ' || i || ' Holdings', 'w' || i || '.example.com', 'b-' || i, now(), now()
       FROM generate_series($3::int, $4::int) AS i`,
      [orgs.large.id, tag, from, from + WRITE_BATCH - 1],
    );
  }
  log(
    `search: wrote ${WRITTEN.toLocaleString("en")} accounts ${WRITE_BATCH} a statement in ${((performance.now() - writeStarted) / 1000).toFixed(0)} s`,
  );
  const afterWrite = { written: WRITTEN, ...(await quickCases(" after the write")) };
  const elsewhere = await compare(
    "GET /search?q=holdings (another organisation's 100,000 accounts) after the write",
    "/search?q=holdings",
    undefined,
    [0, 0],
    ["small"],
  );
  const neighbour = { commonElsewhereMs: elsewhere.ms.small, nowhereMs: afterWrite.none.ms.small };
  await client.query(`ALTER TABLE "SearchEntry" RESET (autovacuum_enabled)`);
  await client.query(`ALTER TABLE "Account" RESET (autovacuum_enabled)`);
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
    bulkOnMs: await timedWrite(client, bulkSql, [orgs.small.id, tag], runs, true),
    bulkOffMs: await timedWrite(client, bulkSql, [orgs.small.id, tag], runs, false),
    oneOnMs: await timedWrite(client, oneSql, [`z_small${tag}_1`], runs, true),
    oneOffMs: await timedWrite(client, oneSql, [`z_small${tag}_1`], runs, false),
  };
  log(
    `search: keeping the index: INSERT of 500 accounts ${writes.bulkOnMs.toFixed(1)} ms with it, ${writes.bulkOffMs.toFixed(1)} ms without; UPDATE of one name ${writes.oneOnMs.toFixed(2)} ms with it, ${writes.oneOffMs.toFixed(2)} ms without`,
  );
  return { sizes: SEARCH_SIZES, quick, none, fuzzy, structured, broad, afterWrite, neighbour, index, writes };
}

/** The report's lines for search (docs/architecture.md, "Search"), medians of `runs` requests. */
export function searchLines(search: SearchResult, runs: number): string[] {
  const pad = (text: string, width: number, right = false) => (right ? text.padStart(width) : text.padEnd(width));
  const { small, medium, large } = search.sizes;
  const count = (n: number) => n.toLocaleString("en");
  const lines = [
    `Search, ${count(small)} / ${count(medium)} / ${count(large)} accounts — median of ${runs} requests each`,
    `  ${pad("case", 52)}${pad(`${count(small)} ms`, 10, true)}${pad(`${count(medium)} ms`, 12, true)}${pad(`${count(large)} ms`, 14, true)}${pad("ratio", 8, true)}`,
  ];
  const row = (label: string, entry: SearchCase) =>
    `  ${pad(label, 52)}${pad(entry.ms.small.toFixed(2), 10, true)}${pad(entry.ms.medium.toFixed(2), 12, true)}${pad(entry.ms.large.toFixed(2), 14, true)}${pad(`${entry.ratio.toFixed(2)}x`, 8, true)}`;
  lines.push(row("GET /search?q=zephyr den (10 matches)", search.quick));
  lines.push(row("GET /search?q=xylophone (no match)", search.none));
  lines.push(row("GET /search?q=zephir dental (typo)", search.fuzzy));
  lines.push(row("POST /accounts/search (3 groups, 20 matches)", search.structured));
  const written = count(search.afterWrite.written);
  lines.push(row(`  after writing ${written} accounts: zephyr den`, search.afterWrite.quick));
  lines.push(row(`  after writing ${written} accounts: xylophone`, search.afterWrite.none));
  lines.push(row(`  after writing ${written} accounts: zephir dental`, search.afterWrite.fuzzy));
  lines.push(
    `  ${count(small)} accounts, after another organisation wrote ${written} "Holdings": q=holdings ${search.neighbour.commonElsewhereMs.toFixed(2)} ms, q=xylophone ${search.neighbour.nowhereMs.toFixed(2)} ms`,
  );
  lines.push(
    `  GET /search?q=account (every record): ${count(small)} ${search.broad.smallMs.toFixed(2)} ms, ${count(medium)} ${search.broad.mediumMs.toFixed(2)} ms`,
  );
  lines.push(
    `  index: ${count(search.index.entries)} entries, table ${search.index.tableMb.toFixed(1)} MB + words ${search.index.documentIndexMb.toFixed(1)} MB + trigrams ${search.index.fuzzyIndexMb.toFixed(1)} MB (${search.index.bytesPerEntry.toFixed(0)} bytes an entry)`,
  );
  lines.push(
    `  writes: INSERT of 500 accounts ${search.writes.bulkOnMs.toFixed(1)} ms with the index, ${search.writes.bulkOffMs.toFixed(1)} ms without; UPDATE of a name ${search.writes.oneOnMs.toFixed(2)} vs ${search.writes.oneOffMs.toFixed(2)} ms`,
  );
  return lines;
}

/**
 * The search targets (docs/architecture.md, "Search"): each case's median at 1,000,000 accounts within `target` times
 * its median at 1,000, as the report's `{ name, value, target, pass }` rows.
 */
export function searchRatios(search: SearchResult, target: number) {
  const cases: Array<[string, SearchCase]> = [
    ["search quick", search.quick],
    ["search no match", search.none],
    ["search typo", search.fuzzy],
    ["search structured", search.structured],
    ["after write: quick", search.afterWrite.quick],
    ["after write: none", search.afterWrite.none],
    ["after write: typo", search.afterWrite.fuzzy],
  ];
  return cases.map(([name, entry]) => ({
    name: `${name} 1M/1k`,
    value: entry.ratio,
    target: `<= ${target}`,
    pass: entry.ratio <= target,
  }));
}
