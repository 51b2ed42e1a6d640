// Erasure of a person in the benchmark (`npm run bench`, section "Erasure"; `-- --only=erasure` runs it alone): a
// contact with 1,000 historical states whose names, emails and phone numbers share no word (1,000 PATCHes through the
// API, each with an Idempotency-Key, every tenth followed by a lookup of its email in a query string) in an organisation that also holds 20,000 events of other
// records with their deliveries and attempts and 20,000 request-log rows, erased with POST /contacts/{id}/erase:
// the request's time and, on PostgreSQL, how long its statements hold their locks.
//
// How the lock is measured: a second connection samples pg_locks and pg_stat_activity every 2 ms while the erasure
// runs. A transaction's row locks are not listed one by one; each is held from its statement to the commit, and the
// transaction holds the lock on its own transaction id from its first row lock (or write) to the commit: the longest
// presence of that lock is the longest any row stays locked. The longest statement is the longest time one backend
// stays on one statement (`query_start`). The embedded database (PGlite) has one connection, which the erasure holds
// for its whole time: its time is reported, and nothing else runs meanwhile.
//
// Each backend runs in a child process of its own (the database is process-wide): this file is that child when run
// as a script (`node --import tsx bench/erasure.ts`), printing its result on one line; bench/run.ts calls
// measureErasure().
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pg from "pg";

/** Historical states of the erased contact. */
export const ERASURE_STATES = 1_000;
/** Events of other records in its organisation, each with a delivery and an attempt. */
const OTHER_EVENTS = 20_000;
/** Request-log rows of other requests in its organisation. */
const OTHER_REQUESTS = 20_000;
/** The erasure's time the contract promises for this case (docs/api-contract.md §4.16), ms. */
export const ERASURE_TARGET_MS = 10_000;

/** What one backend's run reports; times in ms. */
export interface ErasureRun {
  backend: "postgres" | "pglite";
  states: number;
  otherEvents: number;
  otherRequests: number;
  seedSeconds: number;
  /** POST /contacts/{id}/erase, sent to answered. */
  erasureMs: number;
  /** What the erasure answered it redacted. */
  redacted: Record<string, number>;
  /** How long its transaction held row locks (first row lock to commit); null on PGlite (not sampled). */
  rowLockMs: number | null;
  /** Its longest statement; null on PGlite. */
  longestStatementMs: number | null;
  /** Values of sampled states still stored anywhere after the erasure (expected 0). */
  valuesLeft: number;
}

/** What {@link measureErasure} reports: one run per backend. */
export interface ErasureResult {
  postgres: ErasureRun;
  pglite: ErasureRun;
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** What starts the child's result line (the server's log lines are JSON too). */
const RESULT = "erasure-result ";

/** Runs this file as a child process with `env` and parses the JSON line it prints. */
function runChild(env: NodeJS.ProcessEnv): Promise<ErasureRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join("bench", "erasure.ts")], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err = (err + chunk.toString("utf8")).slice(-4_000);
    });
    child.on("exit", (code) => {
      const line = out.split("\n").find((text) => text.startsWith(RESULT));
      if (code === 0 && line) resolve(JSON.parse(line.slice(RESULT.length)) as ErasureRun);
      else reject(new Error(`the erasure bench exited ${code}:\n${err}`));
    });
  });
}

/**
 * Measures the erasure on PostgreSQL (`databaseUrl`, a scratch database already migrated or not) and on the embedded
 * default (a new data directory, removed afterwards), each in its own child process.
 */
export async function measureErasure(options: {
  databaseUrl: string;
  redisUrl: string;
  log: (line: string) => void;
}): Promise<ErasureResult> {
  const { DATABASE_URL: _database, REDIS_URL: _redis, ...inherited } = process.env;
  options.log(`erasure: PostgreSQL, ${ERASURE_STATES.toLocaleString("en")} states…`);
  const postgres = await runChild({ ...inherited, DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl });
  options.log(`erasure: ${postgres.erasureMs.toFixed(0)} ms, row locks ${postgres.rowLockMs?.toFixed(0)} ms`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "bench-erasure-"));
  try {
    options.log(`erasure: embedded PGlite, ${ERASURE_STATES.toLocaleString("en")} states…`);
    const pglite = await runChild({ ...inherited, DATA_DIR: dataDir });
    options.log(`erasure: ${pglite.erasureMs.toFixed(0)} ms`);
    return { postgres, pglite };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Report lines of {@link measureErasure}. */
export function erasureLines(result: ErasureResult): string[] {
  const run = result.postgres;
  const lines = [
    `Erasure of a contact with ${run.states.toLocaleString("en")} historical states, beside ${run.otherEvents.toLocaleString("en")} other events (with deliveries and attempts) and ${run.otherRequests.toLocaleString("en")} request-log rows`,
  ];
  for (const entry of [result.postgres, result.pglite]) {
    const locks =
      entry.rowLockMs === null
        ? "one connection: nothing else runs meanwhile"
        : `row locks held ${entry.rowLockMs.toFixed(0)} ms, longest statement ${entry.longestStatementMs?.toFixed(0)} ms`;
    lines.push(
      `  ${entry.backend.padEnd(9)} ${entry.erasureMs.toFixed(0).padStart(6)} ms (target < ${ERASURE_TARGET_MS}); ${locks}; redacted ${Object.entries(
        entry.redacted,
      )
        .map(([store, count]) => `${store} ${count}`)
        .join(", ")}; values left ${entry.valuesLeft}; seeded in ${entry.seedSeconds.toFixed(0)} s`,
    );
  }
  return lines;
}

// ---------- the child: one backend ----------

/**
 * Samples the locks and statements of every other backend of the database every 2 ms until stopped.
 * @returns the longest presence of one transaction-id lock and the longest one statement stayed active, ms.
 */
function sampleLocks(url: string): { stop: () => Promise<{ rowLockMs: number; longestStatementMs: number }> } {
  const client = new pg.Client({ connectionString: url });
  const xids = new Map<string, { first: number; last: number }>();
  let longestStatementMs = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const now = performance.now();
      const { rows } = await client.query<{ kind: string; key: string; ms: number | null }>(`
        SELECT 'xid' AS kind, l.pid || ':' || l.transactionid AS key, NULL::float8 AS ms
        FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
        WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
          AND a.datname = current_database() AND l.pid <> pg_backend_pid()
        UNION ALL
        SELECT 'statement', a.pid || ':' || a.query_start, extract(epoch FROM clock_timestamp() - a.query_start) * 1000
        FROM pg_stat_activity AS a
        WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.state = 'active'`);
      for (const row of rows) {
        if (row.kind === "statement") longestStatementMs = Math.max(longestStatementMs, row.ms ?? 0);
        else {
          const seen = xids.get(row.key);
          if (seen) seen.last = now;
          else xids.set(row.key, { first: now, last: now });
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await client.end();
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const rowLockMs = Math.max(0, ...[...xids.values()].map((seen) => seen.last - seen.first));
      return { rowLockMs, longestStatementMs };
    },
  };
}

async function child(): Promise<void> {
  const embedded = !process.env.DATABASE_URL;
  const { migrateProcessDatabase } = await import("../server/db/ready");
  await migrateProcessDatabase({ own: true });
  const { prisma, transaction } = await import("../server/db/transaction");
  const { ensureOrganisation } = await import("../server/platform/organisations");
  const { createApiKey } = await import("../server/platform/api-keys/service");
  const { flushAudit, recordAudit } = await import("../server/platform/request-log/record");
  const { recordEvents } = await import("../server/records/events");
  const { startApi } = await import("../test/helpers/http-server");

  const seedStarted = performance.now();
  const org = await ensureOrganisation(`bench-erasure-${randomBytes(4).toString("hex")}`, {
    limits: { perKey: 1_000_000_000, perOrg: 1_000_000_000 },
  });
  const { raw: key, key: apiKey } = await createApiKey(org.id, {
    name: "bench",
    scopes: ["contacts:read", "contacts:write"],
    isTest: false,
  });
  const server = await startApi();
  const call = async (method: string, target: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${target}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${target} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text).data;
  };

  // The organisation's other history, written as its writers write it: events of other records (a few naming the
  // contact), a delivery and an attempt of each, and request-log rows.
  // Every state's name, email and phone share no word with another state's (but the email's .example): the case no
  // few words cover, so every stored row's words go through the hash join.
  const word = (n: number, salt: number) => {
    let x = (n * 2_654_435_761 + salt * 40_503) >>> 0;
    let text = "";
    for (let i = 0; i < 8; i++) {
      text += String.fromCharCode(97 + (x % 26));
      x = Math.floor(x / 26) + i * 7_919;
    }
    return text;
  };
  const state = (n: number) => ({
    email: `${word(n, 1)}@${word(n, 2)}.example`,
    firstName: word(n, 3),
    lastName: word(n, 4),
    phone: `+${100_000_000 + n * 7_919}`,
  });
  await transaction((tx) =>
    recordEvents(
      tx,
      org.id,
      { isTest: false, deliver: false, apiKeyId: apiKey.id },
      Array.from({ length: OTHER_EVENTS }, (_, index) => ({
        name: "note.created" as const,
        data: {
          id: `note_${index}`,
          objectType: "Account",
          body:
            index % 1_000 === 0
              ? `Spoke with ${state(index / 10 + 1).email} about the renewal.`
              : `Quarterly review ${index}: backups verified, two laptops due for replacement.`,
        },
      })),
    ),
  );
  await prisma().$executeRaw`
    WITH endpoint AS (
      INSERT INTO "WebhookEndpoint" ("id", "orgId", "url", "events", "secret", "updatedAt")
      VALUES ('wh_bench_erasure_' || ${org.id}, ${org.id}, 'https://receiver.example/hook', '{*}', 'whsec_bench', now())
      RETURNING "id"
    ), delivered AS (
      INSERT INTO "WebhookDelivery" ("id", "orgId", "endpointId", "eventId", "status", "attemptCount", "updatedAt")
      SELECT 'whd_' || e."id", e."orgId", (SELECT "id" FROM endpoint), e."id", 'SUCCEEDED', 1, now()
      FROM "Event" AS e WHERE e."orgId" = ${org.id}
      RETURNING "id"
    )
    INSERT INTO "DeliveryAttempt" ("deliveryId", "attempt", "startedAt", "durationMs", "responseStatus", "responseBody", "success", "url")
    SELECT d."id", 1, now(), 40, 200, 'ok', true, 'https://receiver.example/hook' FROM delivered AS d`;
  const at = Date.now() - 86_400_000;
  for (let index = 0; index < OTHER_REQUESTS; index++) {
    recordAudit({
      orgId: org.id,
      apiKeyId: apiKey.id,
      isTest: false,
      requestId: `req_bench_${index}`,
      method: "GET",
      path: "/api/v1/accounts",
      query: `limit=50&cursor=c${index}`,
      status: 200,
      errorCode: null,
      durationMs: 12,
      ip: "203.0.113.9",
      userAgent: "psa-sync/2.1",
      createdAt: new Date(at + index * 1_000),
    });
  }
  await flushAudit();

  // The contact's 1,000 states, through the API.
  const contact = await call("POST", "/contacts", state(0));
  let next = 1;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let n = next++; n <= ERASURE_STATES; n = next++) {
        await call("PATCH", `/contacts/${contact.id}`, state(n), { "Idempotency-Key": `bench-${n}` });
        if (n % 10 === 0) await call("GET", `/contacts?email=${encodeURIComponent(state(n).email)}`);
      }
    }),
  );
  await flushAudit();
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const sampler = embedded ? null : sampleLocks(process.env.DATABASE_URL as string);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = performance.now();
  const erased = await call("POST", `/contacts/${contact.id}/erase`);
  const erasureMs = performance.now() - started;
  const sampled = await sampler?.stop();

  // Spot-check: none of a sample of the states' values is stored anywhere it was copied to.
  const sample = [0, 1, 99, 500, 999, ERASURE_STATES].map(state);
  const needles = sample.flatMap((s) => [s.email, s.phone, `${s.firstName} ${s.lastName}`]);
  const [left] = await prisma().$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM unnest(${needles}::text[]) AS v
    WHERE EXISTS (SELECT 1 FROM "Event" AS e WHERE e."orgId" = ${org.id} AND strpos(e."data"::text || coalesce(e."previous"::text, ''), v) > 0)
       OR EXISTS (SELECT 1 FROM "AuditLog" AS l WHERE l."orgId" = ${org.id} AND strpos(l."query", replace(v, '@', '%40')) > 0)
       OR EXISTS (SELECT 1 FROM "IdempotencyKey" AS k WHERE k."orgId" = ${org.id} AND strpos(k."responseBody", v) > 0)`;
  await server.close();

  const run: ErasureRun = {
    backend: embedded ? "pglite" : "postgres",
    states: ERASURE_STATES,
    otherEvents: OTHER_EVENTS,
    otherRequests: OTHER_REQUESTS,
    seedSeconds,
    erasureMs,
    redacted: erased.redacted,
    rowLockMs: sampled?.rowLockMs ?? null,
    longestStatementMs: sampled?.longestStatementMs ?? null,
    valuesLeft: left?.n ?? -1,
  };
  console.log(`${RESULT}${JSON.stringify(run)}`);
  const { closeDb } = await import("../server/db/client");
  await closeDb();
  process.exit(0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await child();
