// A hostile neighbour (docs/architecture.md, "Budgets: what one request may cost"): while organisation A runs its
// costliest legal requests from ten clients (structured search with five groups of long `contains` filters over long
// custom text values, a list sorted by a custom field, quick search, a list with long `contains` filters, the usage
// CSV over 90 days), organisation B's plain `GET /accounts` is timed against the same reads on a quiet service.
// Target: B's p95 within 2× its quiet p95, no 5xx for either, A answered 429 where its budget ends.
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import type pg from "pg";
import { quantile, send } from "./load";
import type { ChildServer } from "./servers";
import { signedInOwner } from "./settings-pages";

/** Accounts of organisation A, each with a 1,000-character custom text value that almost matches A's filters. */
export const HOSTILE_ROWS = 20_000;
/** Accounts of organisation B. */
const NEIGHBOUR_ROWS = 1_000;
/** A's clients, each with a key of its own (the organisation's window counts them together). */
const HOSTILE_CLIENTS = 10;
/** B's clients, each sending a request every {@link NEIGHBOUR_PACE_MS}: a steady, moderate load. */
const NEIGHBOUR_CLIENTS = 2;
const NEIGHBOUR_PACE_MS = 20;
/** A `contains` value as long as the contract allows (docs/api-contract.md §4.9.3). */
const CONTAINS_MAX = 100;

/** What {@link prepareNeighbours} made: the two organisations' keys and A's owner's settings cookie. */
export interface NeighboursFixture {
  hostileKeys: string[];
  hostileCookie: string;
  neighbourKey: string;
  seedMs: number;
}

/** What {@link measureNeighbours} reports: B's latencies (ms) quiet and beside A, and every status either got. */
export interface NeighboursResult {
  quiet: { p50: number; p95: number; requests: number };
  loaded: { p50: number; p95: number; requests: number };
  ratio: number;
  neighbourStatuses: Record<string, number>;
  hostileStatuses: Record<string, number>;
  hostileRequests: number;
  seconds: number;
}

/**
 * Seeds A (the default plan, Starter: 60 requests a minute organisation-wide, so one slot for expensive work and 15 s
 * of database time a minute, docs/api-contract.md §8.5; ten keys; 20,000 accounts with a searchable 1,000-character `note`; 200,000 request-log
 * rows over 90 days) and B (1,000 accounts, limits out of the way), through the services and SQL.
 * @param origin the public origin of the server, for A's owner's sign-in cookie.
 */
export async function prepareNeighbours(
  client: pg.Client,
  origin: string,
  log: (line: string) => void,
): Promise<NeighboursFixture> {
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createApiKey } = await import("../server/platform/api-keys/service");
  const { createCustomField } = await import("../server/records/custom-fields/service");
  const { SEED_ORIGIN } = await import("../server/records/events");
  const tag = randomBytes(4).toString("hex");
  const hostile = await ensureOrganisation(`bench-hostile-${tag}`, { name: "Hostile", plan: "STARTER" });
  const neighbour = await ensureOrganisation(`bench-neighbour-${tag}`, {
    name: "Neighbour",
    limits: { perKey: 1_000_000, perOrg: 1_000_000 },
  });
  const hostileKeys: string[] = [];
  for (let i = 0; i < HOSTILE_CLIENTS; i++) {
    const key = await createApiKey(hostile.id, { name: `hostile ${i}`, scopes: ["admin:read"], isTest: false });
    hostileKeys.push(key.raw);
  }
  const neighbourKey = (
    await createApiKey(neighbour.id, { name: "neighbour", scopes: ["accounts:read"], isTest: false })
  ).raw;
  await createCustomField(
    hostile.id,
    { resource: "account", key: "note", label: "Note", type: "text", searchable: true },
    SEED_ORIGIN,
  );
  const hostileCookie = await signedInOwner(origin, hostile.id, "hostile");

  const started = performance.now();
  // 999 'a's and the row number: every row nearly matches a filter of 'a's ending in 'b'.
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "customFields", "createdAt", "updatedAt")
     SELECT 'hostile_' || md5(i::text), $1, repeat('a', 90) || ' Account ' || i, 'ACTIVE',
            jsonb_build_object('note', repeat('a', 990) || lpad(i::text, 10, '0')), now(), now()
     FROM generate_series(1, $2::int) AS i`,
    [hostile.id, HOSTILE_ROWS],
  );
  await client.query(
    `INSERT INTO "Account" ("id", "orgId", "name", "lifecycleStatus", "industry", "employeeCount", "createdAt", "updatedAt")
     SELECT 'neighbour_' || md5(i::text), $1, 'Neighbour account ' || i, 'ACTIVE', 'IT services', i % 500,
            now() - i * INTERVAL '1 second', now()
     FROM generate_series(1, $2::int) AS i`,
    [neighbour.id, NEIGHBOUR_ROWS],
  );
  await client.query(
    `INSERT INTO "AuditLog" ("orgId", "apiKeyId", "requestId", "method", "path", "status", "durationMs", "createdAt")
     SELECT $1, 'hostile', 'req_' || md5(i::text), 'GET', '/api/v1/accounts/' || (i % 5000), 200, 3,
            (now() AT TIME ZONE 'UTC') - (i::float8 / 200000) * INTERVAL '89 days'
     FROM generate_series(1, 200000) AS i`,
    [hostile.id],
  );
  await client.query(`VACUUM ANALYZE "Account", "AuditLog", "SearchEntry"`);
  const seedMs = performance.now() - started;
  log(
    `neighbours: seeded ${HOSTILE_ROWS.toLocaleString("en")} hostile accounts (1,000-character notes), ${NEIGHBOUR_ROWS.toLocaleString("en")} neighbour accounts and 200,000 request-log rows in ${(seedMs / 1000).toFixed(1)} s`,
  );
  return { hostileKeys, hostileCookie, neighbourKey, seedMs };
}

/** A's costly requests, one after another by each client: [method, path, body?, cookie?]. */
function hostileRequests(): Array<[string, string, unknown?, boolean?]> {
  const near = `${"a".repeat(CONTAINS_MAX - 1)}b`;
  const group = (i: number) => ({
    filters: [
      { field: "customFields.note", operator: "contains", value: near },
      { field: "name", operator: "contains", value: `${"a".repeat(CONTAINS_MAX - 1 - i)}c` },
    ],
  });
  const to = new Date();
  const from = new Date(to.getTime() - 90 * 24 * 60 * 60 * 1000);
  return [
    ["POST", "/api/v1/accounts/search", { filterGroups: [0, 1, 2, 3, 4].map(group), limit: 100 }],
    ["GET", "/api/v1/accounts?sort=customFields.note:desc&limit=100"],
    ["GET", `/api/v1/search?q=${encodeURIComponent("aaaa account")}&limit=50`],
    [
      "GET",
      `/api/v1/accounts?limit=100&customFields.note[contains]=${near}&name[contains]=${"a".repeat(CONTAINS_MAX)}`,
    ],
    ["GET", `/settings/usage/export?from=${from.toISOString()}&to=${to.toISOString()}`, undefined, true],
  ];
}

function count(into: Record<string, number>, status: number): void {
  into[String(status)] = (into[String(status)] ?? 0) + 1;
}

/** B's paced reads for `ms`: latencies and statuses. */
async function neighbourReads(origin: string, key: string, ms: number, statuses: Record<string, number>) {
  const latencies: number[] = [];
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: NEIGHBOUR_CLIENTS }, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (performance.now() < until) {
        const started = performance.now();
        const res = await send(agent, `${origin}/api/v1/accounts?limit=50`, {
          headers: { authorization: `Bearer ${key}` },
        }).catch(() => ({ status: 0, ms: performance.now() - started, body: "" }));
        count(statuses, res.status);
        latencies.push(res.ms);
        const rest = NEIGHBOUR_PACE_MS - (performance.now() - started);
        if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      }
      agent.destroy();
    }),
  );
  return latencies;
}

/**
 * Times B's reads alone for `quietMs`, then again for `loadedMs` while A's ten clients send their costly requests
 * back to back (from `warmMs` before B's reads start until they end).
 */
export async function measureNeighbours(
  server: ChildServer,
  fixture: NeighboursFixture,
  log: (line: string) => void,
  options: { quietMs: number; loadedMs: number; warmMs: number } = { quietMs: 15_000, loadedMs: 30_000, warmMs: 3_000 },
): Promise<NeighboursResult> {
  const neighbourStatuses: Record<string, number> = {};
  // Warm the path first (the first requests load code and plans).
  await neighbourReads(server.origin, fixture.neighbourKey, 2_000, {});
  const quiet = await neighbourReads(server.origin, fixture.neighbourKey, options.quietMs, neighbourStatuses);

  const hostileStatuses: Record<string, number> = {};
  const requests = hostileRequests();
  let stop = false;
  let hostileCount = 0;
  const started = performance.now();
  const hostile = Promise.all(
    fixture.hostileKeys.map(async (key, index) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = index; !stop; i++) {
        const [method, path, body, cookie] = requests[i % requests.length] as [string, string, unknown?, boolean?];
        const headers: Record<string, string> = cookie
          ? { cookie: fixture.hostileCookie }
          : { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) };
        const res = await send(agent, `${server.origin}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        }).catch(() => ({ status: 0, ms: 0, body: "" }));
        hostileCount += 1;
        count(hostileStatuses, res.status);
        // A client that honours Retry-After would wait; a hostile one does not, but does not spin either.
        if (res.status === 429) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      agent.destroy();
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, options.warmMs));
  const loaded = await neighbourReads(server.origin, fixture.neighbourKey, options.loadedMs, neighbourStatuses);
  stop = true;
  await hostile;
  const seconds = (performance.now() - started) / 1000;
  const result: NeighboursResult = {
    quiet: { p50: quantile(quiet, 0.5), p95: quantile(quiet, 0.95), requests: quiet.length },
    loaded: { p50: quantile(loaded, 0.5), p95: quantile(loaded, 0.95), requests: loaded.length },
    ratio: quantile(loaded, 0.95) / quantile(quiet, 0.95),
    neighbourStatuses,
    hostileStatuses,
    hostileRequests: hostileCount,
    seconds,
  };
  log(
    `neighbours: B's GET /accounts p95 ${result.quiet.p95.toFixed(1)} ms quiet, ${result.loaded.p95.toFixed(1)} ms beside A (${result.ratio.toFixed(2)}×; p50 ${result.quiet.p50.toFixed(1)} → ${result.loaded.p50.toFixed(1)} ms); B ${JSON.stringify(neighbourStatuses)}; A ${hostileCount} requests in ${seconds.toFixed(0)} s ${JSON.stringify(hostileStatuses)}`,
  );
  return result;
}
