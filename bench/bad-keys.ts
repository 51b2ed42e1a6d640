// What refused clients cost the database (docs/architecture.md, "API keys and the key cache"): 200 requests with bad
// keys from a fresh client address, one after another as one misconfigured or guessing client sends them (120 × 401,
// then 429 once the address's anonymous window is full), and the database transactions they cost, request-log
// batches included (target: fewer than 5). Counted by PostgreSQL itself (test/helpers/database-transactions.ts), on a
// database only the measured server uses.
import { createSecretKey, randomBytes } from "node:crypto";
import { request } from "node:http";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { generateApiKey } from "../server/platform/api-keys/format";
import { settledTransactions } from "../test/helpers/database-transactions";
import { legacyApiKey } from "../test/helpers/legacy-keys";

/** Requests of the flood. */
export const BAD_KEY_REQUESTS = 200;
/** The target: the flood costs fewer database transactions than this. */
export const BAD_KEY_TRANSACTIONS_TARGET = 5;
/** Longer than the longest wait of a request-log row without an organisation (1 s, server/platform/request-log/record.ts). */
const LOG_SETTLE_MS = 1_500;

/** Result of {@link measureBadKeys}. */
export interface BadKeysResult {
  requests: number;
  /** How many answers had each status. */
  statuses: Record<string, number>;
  /** Database transactions the flood cost, request-log batches included. */
  transactions: number;
  /** Request-log rows stored for the flood's address (every request is recorded, docs/api-contract.md §1.2). */
  logged: number;
  /** Wall time of the flood, s. */
  seconds: number;
}

/** A loopback source address of its own (any 127.x.y.z reaches the server): a fresh client with an empty window. */
function freshLoopbackAddress(): string {
  const [a = 1, b = 1, c = 1] = randomBytes(3);
  return `127.${a}.${b}.${Math.max(c, 2)}`;
}

function get(origin: string, localAddress: string, key: string): Promise<number> {
  const url = new URL(`${origin}/api/v1/accounts`);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        localAddress,
        headers: { Authorization: `Bearer ${key}` },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/**
 * What a client without a key sends: keys of the current format with a checksum made under another secret, and
 * first-format keys (30 characters and a CRC32 anyone can compute), alternately.
 */
function badKey(index: number): string {
  return index % 2 === 0 ? generateApiKey(false, createSecretKey(randomBytes(32))).raw : legacyApiKey();
}

/**
 * Sends {@link BAD_KEY_REQUESTS} bad-key requests to `GET /api/v1/accounts` from a fresh loopback address, one after
 * another, and counts the transactions of `database` they cost: from a settled count taken after one warm-up request
 * (the server's first key reads what it recognises keys by) to one taken once the request log's last batch is due.
 * @param options.origin the server's origin; it must be the only user of `database` (no other connection to it may be
 *   open: counting ends them).
 * @param options.adminUrl a URL of the same PostgreSQL server on another database.
 * @param options.databaseUrl the URL of `database`, connected to after the measure only (to count the logged rows).
 */
export async function measureBadKeys(options: {
  origin: string;
  adminUrl: string;
  database: string;
  databaseUrl: string;
  log: (line: string) => void;
}): Promise<BadKeysResult> {
  const { origin, adminUrl, database } = options;
  await get(origin, freshLoopbackAddress(), badKey(0));
  await new Promise((resolve) => setTimeout(resolve, LOG_SETTLE_MS));
  const before = await settledTransactions(adminUrl, database);
  const address = freshLoopbackAddress();
  const statuses: Record<string, number> = {};
  const started = performance.now();
  for (let i = 0; i < BAD_KEY_REQUESTS; i++) {
    const status = String(await get(origin, address, badKey(i)));
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, LOG_SETTLE_MS));
  const transactions = (await settledTransactions(adminUrl, database)) - before;
  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  let logged: number;
  try {
    const { rows } = await client.query<{ logged: string }>(
      `SELECT count(*) AS logged FROM "AuditLog" WHERE "ip" = $1`,
      [address],
    );
    logged = Number(rows[0]?.logged ?? 0);
  } finally {
    await client.end();
  }
  options.log(
    `bad keys: ${BAD_KEY_REQUESTS} requests in ${seconds.toFixed(2)} s (${JSON.stringify(statuses)}), ${transactions} database transactions, ${logged} logged`,
  );
  return { requests: BAD_KEY_REQUESTS, statuses, transactions, logged, seconds };
}
