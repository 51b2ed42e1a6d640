// The events feed keeps a copy in sync with no gaps and in commit order: a poller follows GET /events while 8 writers
// create, update, bulk-upsert and delete concurrently, and ends with an exact copy; a forced account deletion racing
// PATCHes of its contact never leaves a follower with an older state; a writer that stamped its events first holds
// back later ones of its organisation only, never another organisation's feed; cursors of the first format still
// work; retention ends old cursors with 410; updates say what changed and who changed it.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { isDeepStrictEqual } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { purgeExpiredEvents } from "../../../server/platform/events-feed/service";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

type Api = ReturnType<typeof client>;
type Row = Record<string, unknown> & { id: string };

const RESOURCES = {
  account: "/accounts",
  contact: "/contacts",
  deal: "/deals",
  device: "/devices",
  task: "/tasks",
  note: "/notes",
  touchpoint: "/touchpoints",
} as const;
type Resource = keyof typeof RESOURCES;

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

/** Every record of a list endpoint, following nextCursor. */
async function listAll(api: Api, path: string): Promise<Row[]> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  do {
    const res = await api("GET", `${path}?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    rows.push(...res.body.data);
    cursor = res.body.hasMore ? res.body.nextCursor : null;
  } while (cursor);
  return rows;
}

/** A poller of the feed: applies every event to its copy (upsert data, delete on a tombstone). */
class Poller {
  copy = new Map<Resource, Map<string, Row>>(Object.keys(RESOURCES).map((r) => [r as Resource, new Map()]));
  cursor: string | null = null;
  seen = new Set<string>();
  tombstones = new Set<string>();
  constructor(private readonly api: Api) {}

  /** Reads pages until the feed has nothing more visible now. @returns the number of events read. */
  async drain(): Promise<number> {
    let read = 0;
    for (;;) {
      const res = await this.api("GET", `/events?limit=100${this.cursor ? `&cursor=${this.cursor}` : ""}`);
      expect(res.status).toBe(200);
      for (const event of res.body.data) {
        expect(this.seen.has(event.id)).toBe(false);
        this.seen.add(event.id);
        const records = this.copy.get(event.resource) as Map<string, Row>;
        if (event.data.deleted === true) {
          records.delete(event.data.id);
          this.tombstones.add(`${event.resource}:${event.data.id}`);
        } else records.set(event.data.id, event.data);
      }
      read += res.body.data.length;
      if (res.body.nextCursor) this.cursor = res.body.nextCursor;
      if (!res.body.hasMore) return read;
    }
  }
}

/** A raw connection in an open transaction (`BEGIN` sent): the caller commits (`COMMIT`) and closes it (`end`). */
async function openTransaction(): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await connection.connect();
  await connection.query("BEGIN");
  return connection;
}

/** Records an `account.updated` event as `recordEvents` does (`event_record`): it is written, numbered, at commit. */
function insertEvent(connection: pg.Client, orgId: string, id: string, account: { id: string; name: string }) {
  const event = {
    id,
    name: "account.updated",
    resource: "account",
    resourceId: account.id,
    data: account,
    actor: { type: "system" },
    changedFields: [],
    previous: null,
    isTest: false,
    handled: true,
    createdAt: new Date().toISOString(),
  };
  return connection.query(`SELECT "event_record"($1, $2)`, [orgId, JSON.stringify([event])]);
}

const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

/** One writer: a mix of creates, updates, bulk upserts and deletes over every resource; tolerant of races (404/422). */
async function writer(api: Api, n: number, deleted: Set<string>, rounds: number): Promise<void> {
  const accounts: string[] = [];
  const deals: string[] = [];
  const devices: string[] = [];
  const tasks: string[] = [];
  const contacts: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const tag = `${n}-${round}-${randomBytes(3).toString("hex")}`;
    const account = await api("POST", "/accounts", { name: `Account ${tag}`, externalId: `ext-${tag}` });
    expect(account.status).toBe(201);
    accounts.push(account.body.data.id);
    const accountId = account.body.data.id as string;

    const bulk = await api("POST", "/accounts/bulk", {
      accounts: [
        { name: `Bulk ${tag} a`, externalId: `bulk-${n}-${round % 3}`, employeeCount: round },
        { name: `Bulk ${tag} b`, externalId: `bulk-${n}-b-${round}` },
      ],
    });
    expect(bulk.status).toBe(200);

    const contact = await api("POST", "/contacts/bulk", {
      contacts: [{ email: `c${n}-${round % 4}@example.com`, firstName: `F${round}`, accountId }],
    });
    if (contact.status === 200) contacts.push(contact.body.data.results[0].id);
    const deal = await api("POST", "/deals", { name: `Deal ${tag}`, accountId, estimatedMrr: 100 + round });
    if (deal.status === 201) deals.push(deal.body.data.id);
    const device = await api("POST", "/devices/bulk", {
      devices: [
        { rmmAgentId: `agent-${n}-${round % 5}`, hostname: `host-${tag}`, accountId, isOnline: round % 2 === 0 },
      ],
    });
    if (device.status === 200) devices.push(device.body.data.results[0].id);
    const task = await api("POST", "/tasks", { title: `Task ${tag}`, accountId });
    if (task.status === 201) tasks.push(task.body.data.id);
    await api("POST", "/notes", { objectType: "Account", objectId: accountId, body: `Note ${tag}` });
    await api("POST", "/touchpoints", {
      accountId,
      type: "CALL",
      direction: "OUTBOUND",
      subject: `Call ${tag}`,
      occurredAt: new Date().toISOString(),
    });

    const someDeal = pick(deals);
    if (someDeal) await api("PATCH", `/deals/${someDeal}`, { stage: "NEGOTIATION", probability: 40 + round });
    const someTask = pick(tasks);
    if (someTask) await api("PATCH", `/tasks/${someTask}`, { status: "DONE" });
    const someContact = pick(contacts);
    if (someContact) await api("PATCH", `/contacts/${someContact}`, { title: `Title ${tag}` });
    if (round % 3 === 1) {
      const gone = tasks.shift();
      if (gone && (await api("DELETE", `/tasks/${gone}`)).status === 200) deleted.add(`task:${gone}`);
      const goneDevice = devices.shift();
      if (goneDevice && (await api("DELETE", `/devices/${goneDevice}`)).status === 200) {
        deleted.add(`device:${goneDevice}`);
      }
    }
    if (round % 4 === 2) {
      await api("DELETE", `/accounts/${pick(accounts)}`);
      const hard = accounts.shift();
      if (hard && (await api("DELETE", `/accounts/${hard}?force=true`)).status === 200) deleted.add(`account:${hard}`);
    }
  }
}

// FEED_POLLER_RUNS=<n> repeats the 8-writer test n times (CI: once).
const POLLER_RUNS = Number(process.env.FEED_POLLER_RUNS ?? 1);

describe("the events feed", () => {
  it.each(Array.from({ length: POLLER_RUNS }, (_, run) => run + 1))(
    "keeps an exact copy, field by field, while 8 writers create, update, bulk-upsert and delete concurrently (run %i)",
    {
      timeout: 120_000,
    },
    async () => {
      const org = await createTestOrg();
      const api = client(server.url, org.key);
      const poller = new Poller(api);
      const deleted = new Set<string>();
      let writing = true;
      const writers = Promise.all(Array.from({ length: 8 }, (_, n) => writer(api, n, deleted, 8))).finally(() => {
        writing = false;
      });
      let polls = 0;
      while (writing) {
        await poller.drain();
        polls++;
      }
      await writers;
      await poller.drain();
      expect(polls).toBeGreaterThan(1);

      for (const [resource, path] of Object.entries(RESOURCES) as Array<[Resource, string]>) {
        const truth = await listAll(api, path);
        const copy = poller.copy.get(resource) as Map<string, Row>;
        expect(copy.size, `${resource}: record count`).toBe(truth.length);
        for (const row of truth) expect(copy.get(row.id), `${resource} ${row.id}`).toEqual(row);
      }
      for (const gone of deleted) expect(poller.tombstones.has(gone), gone).toBe(true);
      expect(deleted.size).toBeGreaterThan(0);
      // The feed ends where it ended: polling again from the last cursor gives nothing new and the same cursor.
      const again = await api("GET", `/events?cursor=${poller.cursor}`);
      expect(again.body).toMatchObject({ data: [], hasMore: false, nextCursor: poller.cursor });
    },
  );

  it("numbers an organisation's events in commit order, not in the order they were written", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const account = (await api("POST", "/accounts", { name: "Before" })).body.data;
    const start = await api("GET", "/events");
    expect(start.body.data.map((e: { sequence: number }) => e.sequence)).toEqual([1]);

    // Written first, committed last.
    const held = await openTransaction();
    let during: { body: { data: Array<{ event: string; sequence: number; data: unknown }>; nextCursor: string } };
    try {
      await insertEvent(held, org.orgId, "evt_1_held", { id: account.id, name: "Held" });
      // A write of the same organisation is neither blocked by the open transaction nor held back in the feed.
      const patched = await api("PATCH", `/accounts/${account.id}`, { industry: "Legal" });
      expect(patched.status).toBe(200);
      during = await api("GET", `/events?cursor=${start.body.nextCursor}`);
      expect(during.body.data.map((e) => [e.event, e.sequence])).toEqual([["account.updated", 2]]);
      expect(during.body.data[0]?.data).toEqual(patched.body.data);
      await held.query("COMMIT");
    } finally {
      await held.end();
    }
    const after = await api("GET", `/events?cursor=${during.body.nextCursor}`);
    expect(after.body.data.map((e: { id: string; sequence: number }) => [e.id, e.sequence])).toEqual([
      ["evt_1_held", 3],
    ]);
  });

  it("numbers a transaction's events in the order they were written, also after a savepoint rolled back", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const account = { id: "acc_raw", name: "Raw" };
    const connection = await openTransaction();
    try {
      await connection.query("SAVEPOINT attempt");
      await insertEvent(connection, org.orgId, "evt_1_undone", account);
      await connection.query("ROLLBACK TO SAVEPOINT attempt");
      for (const id of ["evt_1_a", "evt_1_b", "evt_1_c"]) await insertEvent(connection, org.orgId, id, account);
      await connection.query("COMMIT");
    } finally {
      await connection.end();
    }
    const feed = (await api("GET", "/events")).body.data;
    expect(feed.map((e: { id: string; sequence: number }) => [e.id, e.sequence])).toEqual([
      ["evt_1_a", 1],
      ["evt_1_b", 2],
      ["evt_1_c", 3],
    ]);
  });

  it("serves another organisation's events at once while a transaction in one stays open", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const accountA = (await apiA("POST", "/accounts", { name: "A" })).body.data;
    const fromA = await apiA("GET", "/events");
    // Organisation A: a change and its event written, the transaction left open.
    const held = await openTransaction();
    try {
      await held.query(`UPDATE "Account" SET "name" = 'Held' WHERE "id" = $1`, [accountA.id]);
      await insertEvent(held, a.orgId, "evt_1_open", { ...accountA, name: "Held" });
      const started = performance.now();
      const created = await apiB("POST", "/accounts", { name: "B" });
      expect(created.status).toBe(201);
      const patched = await apiB("PATCH", `/accounts/${created.body.data.id}`, { industry: "Legal" });
      expect(patched.status).toBe(200);
      const feedB = await apiB("GET", "/events");
      expect(feedB.body.data.map((e: { event: string; sequence: number }) => [e.event, e.sequence])).toEqual([
        ["account.created", 1],
        ["account.updated", 2],
      ]);
      expect(feedB.body.data[1].data).toEqual(patched.body.data);
      // Far below the transaction timeout: B never waited for A.
      expect(performance.now() - started).toBeLessThan(5_000);
      // A's committed events stay readable; its open change is not served yet.
      const stillA = await apiA("GET", `/events?cursor=${fromA.body.nextCursor}`);
      expect(stillA.body).toMatchObject({ data: [], hasMore: false, nextCursor: fromA.body.nextCursor });
      await held.query("COMMIT");
    } finally {
      await held.end();
    }
    const afterA = await apiA("GET", `/events?cursor=${fromA.body.nextCursor}`);
    expect(afterA.body.data.map((e: { id: string; sequence: number }) => [e.id, e.sequence])).toEqual([
      ["evt_1_open", 2],
    ]);
  });

  it("leaves a follower's copy of a contact equal to its GET when a forced account deletion races three PATCHes", {
    timeout: 120_000,
  }, async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const poller = new Poller(api);
    await poller.drain();
    const stale: Array<{ round: number; copy: unknown; truth: unknown }> = [];
    const rounds = 40;
    for (let round = 0; round < rounds; round++) {
      const account = (await api("POST", "/accounts", { name: `Race ${round}` })).body.data;
      const contact = (
        await api("POST", "/contacts", { email: `race-${round}@example.com`, lastName: "start", accountId: account.id })
      ).body.data;
      const answers = await Promise.all([
        api("DELETE", `/accounts/${account.id}?force=true`),
        ...[0, 1, 2].map((n) => api("PATCH", `/contacts/${contact.id}`, { lastName: `p${n}` })),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      await poller.drain();
      const truth = (await api("GET", `/contacts/${contact.id}`)).body.data;
      const copy = poller.copy.get("contact")?.get(contact.id);
      if (!isDeepStrictEqual(copy, truth)) stale.push({ round, copy, truth });
      expect(truth.accounts).toEqual([]);
    }
    expect(stale, `${stale.length} of ${rounds} rounds left the copy stale`).toEqual([]);
  });

  it("answers 410 cursor_expired for a cursor older than the retention, and purges old events", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    await api("POST", "/accounts", { name: "Old" });
    await prisma().event.updateMany({
      where: { orgId: org.orgId },
      data: { createdAt: new Date(Date.now() - 31 * 24 * 3600_000) },
    });
    const page = await api("GET", "/events");
    expect(page.body.data).toHaveLength(1);
    const expired = await api("GET", `/events?cursor=${page.body.nextCursor}`);
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ success: false, error: { code: "cursor_expired" } });
    expect(await purgeExpiredEvents()).toBeGreaterThanOrEqual(1);
    expect((await api("GET", "/events")).body.data).toEqual([]);
    expect((await api("GET", "/events?cursor=djEuMS4x")).status).toBe(400);
  });

  it("continues a cursor of the first format (v1.<txid>.<seq>.<at>) where it stopped, and answers the current format", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    // Three events as the migration leaves those recorded before sequence existed: numbered in the first format's
    // order, their insertion number kept in legacySeq.
    const at = new Date(Date.now() - 3_600_000);
    const base = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    for (const n of [1, 2, 3]) {
      await prisma().$executeRaw`
        INSERT INTO "Event" ("id", "orgId", "sequence", "legacySeq", "name", "resource", "resourceId", "data", "actor",
                             "isTest", "createdAt", "fannedOutAt")
        VALUES (${`evt_old_${org.orgId}_${n}`}, ${org.orgId}, ${n}, ${base + n}, 'account.created', 'account', ${`acc_${n}`},
                ${JSON.stringify({ id: `acc_${n}` })}::jsonb, '{"type":"system"}', false, ${at}, ${at})`;
    }
    await prisma().eventCounter.create({ data: { orgId: org.orgId, lastSequence: 3 } });
    const created = (await api("POST", "/accounts", { name: "After the upgrade" })).body.data;
    const seconds = Math.floor(at.getTime() / 1000);
    const v1 = (seq: number, unix = seconds) => Buffer.from(`v1.${seq + 7}.${seq}.${unix}`).toString("base64url");

    const page = await api("GET", `/events?cursor=${v1(base + 2)}`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((e: { id: string; sequence: number }) => [e.id, e.sequence])).toEqual([
      [`evt_old_${org.orgId}_3`, 3],
      [expect.stringMatching(/^evt_/), 4],
    ]);
    expect(page.body.data[1].data).toEqual(created);
    // The answer carries a signed cursor of the same position: it continues after event 4.
    expect(page.body.nextCursor).toMatch(/^[A-Za-z0-9_-]{34}$/);
    expect((await api("GET", `/events?cursor=${page.body.nextCursor}`)).body.data).toEqual([]);
    // At the end of the feed, an old cursor is answered with the same position in the current format.
    const end = await api("GET", `/events?cursor=${v1(base + 3)}`);
    expect(end.body.data.map((e: { sequence: number }) => e.sequence)).toEqual([4]);
    // An old cursor naming no event of the organisation: 400 saying what to do; older than the retention: 410.
    const unknown = await api("GET", `/events?cursor=${v1(base + 99)}`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: "bad_request",
      message: "cursor is neither a nextCursor of this service nor an id this list takes; start without a cursor",
    });
    const stranger = client(server.url, (await createTestOrg()).key);
    expect((await stranger("GET", `/events?cursor=${v1(base + 2)}`)).status).toBe(400);
    const expired = await api("GET", `/events?cursor=${v1(base + 2, seconds - 31 * 86_400)}`);
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe("cursor_expired");
  });

  it("says what changed, what it was and who changed it, for each resource", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const account = (await api("POST", "/accounts", { name: "Acme", externalId: "acme", employeeCount: 5 })).body.data;
    await api("PATCH", `/accounts/${account.id}`, { employeeCount: 6, industry: "Legal" });
    await api("POST", "/accounts/bulk", { accounts: [{ name: "Acme Ltd", externalId: "acme" }] });
    const contact = (await api("POST", "/contacts", { email: "a@acme.example", firstName: "Ann" })).body.data;
    await api("PATCH", `/contacts/${contact.id}`, { firstName: "Anna" });
    const deal = (await api("POST", "/deals", { name: "Renewal", accountId: account.id })).body.data;
    await api("PATCH", `/deals/${deal.id}`, { name: "Renewal 2027" });
    await api("PATCH", `/deals/${deal.id}`, { stage: "CLOSED_WON" });
    const device = (
      await api("POST", "/devices", { rmmAgentId: "ag-1", hostname: "pc-1", accountId: account.id, isOnline: true })
    ).body.data;
    await api("PATCH", `/devices/${device.id}`, { isOnline: false });
    const task = (await api("POST", "/tasks", { title: "Call back" })).body.data;
    await api("PATCH", `/tasks/${task.id}`, { title: "Call back today" });
    await api("DELETE", `/tasks/${task.id}`);
    const otherKey = await createKey(org.orgId, ["accounts:write"]);
    await client(server.url, otherKey)("PATCH", `/accounts/${account.id}`, { domain: "acme.example" });

    const events = (await api("GET", "/events?limit=100")).body.data;
    const changes = events
      .filter((e: { changedFields?: string[] }) => e.changedFields)
      .map((e: { event: string; changedFields: string[]; previous: object }) => [e.event, e.changedFields, e.previous]);
    expect(changes).toEqual([
      ["account.updated", ["industry", "employeeCount"], { industry: null, employeeCount: 5 }],
      ["account.updated", ["name"], { name: "Acme" }],
      ["contact.updated", ["firstName"], { firstName: "Ann" }],
      ["deal.updated", ["name"], { name: "Renewal" }],
      ["deal.closed_won", ["stage", "closedAt"], { stage: "QUALIFICATION", closedAt: null }],
      ["device.updated", ["isOnline"], { isOnline: true }],
      ["device.offline", ["isOnline"], { isOnline: true }],
      ["task.updated", ["title"], { title: "Call back" }],
      ["account.updated", ["domain"], { domain: null }],
    ]);
    for (const event of events.slice(0, -1)) expect(event.actor).toEqual({ type: "api_key", id: org.apiKeyId });
    expect(events.at(-1).actor).toEqual({ type: "api_key", id: expect.not.stringMatching(org.apiKeyId) });
    expect(events.find((e: { event: string }) => e.event === "task.deleted").data).toEqual({
      id: task.id,
      resource: "task",
      deleted: true,
    });
    // GET /events/{id} returns the same event; another organisation's key gets 404.
    const one = await api("GET", `/events/${events[0].id}`);
    expect(one.body.data).toEqual(events[0]);
    const stranger = client(server.url, (await createTestOrg()).key);
    expect((await stranger("GET", `/events/${events[0].id}`)).status).toBe(404);
    // Filters: types and resource.
    const onlyDeals = (await api("GET", "/events?resource=deal")).body.data;
    expect(onlyDeals.map((e: { event: string }) => e.event)).toEqual([
      "deal.created",
      "deal.updated",
      "deal.closed_won",
    ]);
    const onlyCreated = (await api("GET", "/events?types=account.created,task.created")).body.data;
    expect(onlyCreated.map((e: { event: string }) => e.event)).toEqual(["account.created", "task.created"]);
    expect((await api("GET", "/events?types=account.nope")).status).toBe(422);
  });

  it("is recorded for the demo seed with the system as actor and a hard delete's cascade", async () => {
    const org = await createTestOrg();
    const api = client(server.url, org.key);
    const account = (await api("POST", "/accounts", { name: "Gone", externalId: "gone-1" })).body.data;
    const deal = (await api("POST", "/deals", { name: "D", accountId: account.id })).body.data;
    const task = (await api("POST", "/tasks", { title: "T", accountId: account.id })).body.data;
    await api("POST", "/notes", { objectType: "Deal", objectId: deal.id, body: "n" });
    const contact = (
      await api("POST", "/contacts", { email: "x@gone.example", accountId: account.id, isPrimary: true })
    ).body.data;
    const poller = new Poller(api);
    await poller.drain();
    expect((await api("DELETE", `/accounts/${account.id}?force=true`)).status).toBe(200);
    await poller.drain();
    expect(poller.copy.get("account")?.size).toBe(0);
    expect(poller.copy.get("deal")?.size).toBe(0);
    expect(poller.copy.get("note")?.size).toBe(0);
    expect(poller.copy.get("task")?.get(task.id)).toMatchObject({ accountId: null });
    expect(poller.copy.get("contact")?.get(contact.id)).toMatchObject({ accounts: [] });
    const last = (await api("GET", "/events?types=account.deleted")).body.data.at(-1);
    expect(last.data).toEqual({ id: account.id, resource: "account", deleted: true, externalId: "gone-1" });
  });
});
