// Cursors and sort on every list and the events feed (docs/api-contract.md §4.9, §4.9.1, §6.8), as the contract this
// API was first specified by has them: `nextCursor` is the id of the page's last record and any record id of a list
// continues after that record, as the signed cursors lists answered before still do; a cursor that is neither, or a
// record the list does not have (deleted, another organisation's), is 400 bad_request; a feed cursor forged from an
// event's visible parts still does not skip the 410. An invalid sort pair is ignored and named in the answer, or 422
// naming the allowed fields with `Prefer: handling=strict`. The lists are read from the served OpenAPI document, so a
// new list is covered by itself.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { CURSOR_KINDS, sealCursor } from "../../../server/records/pagination";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { type Receiver, startReceiver } from "../../helpers/receiver";

let server: TestServer;
let receiver: Receiver;
let api: ReturnType<typeof client>;
let endpointId: string;
/** Every GET that takes `cursor`, its path parameters filled in, and the allowed sort fields' example when it sorts. */
let lists: Array<{ path: string; sortExample?: string }>;

const STRICT = { Prefer: "handling=strict" };
/** The lists that sort by custom fields, each with a number field `rank` defined in beforeAll. */
const CUSTOM_FIELD_LISTS: Record<string, string> = {
  "/accounts": "account",
  "/contacts": "contact",
  "/deals": "deal",
  "/devices": "device",
  "/tasks": "task",
};

/** The field of a list's items that its cursor names: the account of a health score, a delivery's attempt. */
const keyOf = (path: string) =>
  path === "/health-scores" ? "accountId" : path.endsWith("/deliveries") ? "attemptId" : "id";

/** The signed cursor lists answered before for the record `id`: its id as text, or a numeric id as 8 bytes. */
function signedCursor(id: string, numeric: boolean): string {
  if (!numeric) return sealCursor(CURSOR_KINDS.text, Buffer.from(id, "utf8"));
  const payload = Buffer.alloc(8);
  payload.writeBigUInt64BE(BigInt(id));
  return sealCursor(CURSOR_KINDS.number, payload);
}

beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
  const org = await createTestOrg();
  api = client(server.url, org.key);
  const created = async (path: string, body: unknown) => {
    const res = await api("POST", path, body);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(201);
    return res.body.data;
  };
  for (const resource of Object.values(CUSTOM_FIELD_LISTS)) {
    await created("/custom-fields", { resource, key: "rank", label: "Rank", type: "number" });
  }
  const accounts = [];
  // Ranks out of creation order, and one record without a value (it sorts last both ways).
  for (const [index, rank] of [2, null, 3, 1].entries()) {
    const customFields = rank === null ? {} : { rank };
    const account = await created("/accounts", { name: `Cursor ${"DBCA"[index]}`, customFields });
    accounts.push(account);
    await created("/contacts", { email: `p${index}@cursor.example`, accountId: account.id, customFields });
    await created("/deals", { name: `Deal ${index}`, accountId: account.id, customFields });
    await created("/devices", {
      rmmAgentId: `agent-${index}`,
      hostname: `pc-${index}`,
      accountId: account.id,
      customFields,
    });
    await created("/tasks", { title: `Task ${index}`, customFields });
    await created("/notes", { objectType: "Account", objectId: account.id, body: `Note ${index}` });
    await created("/touchpoints", { accountId: account.id, type: "CALL", direction: "OUTBOUND" });
  }
  endpointId = (await created("/webhook-endpoints", { url: receiver.url, events: ["*"] })).id;
  for (let i = 0; i < 3; i++) {
    expect((await api("POST", `/webhook-endpoints/${endpointId}/test`)).status).toBe(200);
    // Nothing failed: each replay matches nothing and completes at once, so the next may start.
    const replay = await api("POST", `/webhook-endpoints/${endpointId}/replays`, {
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect(replay.body.data.status).toBe("completed");
  }
  const document = await fetch(`${server.url}/openapi.json`).then((res) => res.json());
  type Parameter = { name: string; schema?: { example?: string } };
  lists = Object.entries(document.paths as Record<string, { get?: { parameters?: Parameter[] } }>)
    .filter(([, item]) => item.get?.parameters?.some((parameter) => parameter.name === "cursor"))
    .map(([path, item]) => ({
      path: path.replace("{id}", endpointId),
      sortExample: item.get?.parameters?.find((parameter) => parameter.name === "sort")?.schema?.example,
    }));
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

const feedCursor = (sequence: bigint, at: number, org: string) => {
  const payload = Buffer.alloc(12);
  payload.writeBigUInt64BE(sequence);
  payload.writeUInt32BE(at, 8);
  return sealCursor(CURSOR_KINDS.feed, payload, org);
};

/** Expects 400 bad_request with one detail on `cursor`. */
function expectCursorRefused(res: Awaited<ReturnType<typeof api>>, what: string): void {
  expect(res.status, what).toBe(400);
  expect(res.body.error, what).toMatchObject({
    code: "bad_request",
    details: [{ path: ["cursor"], message: expect.any(String) }],
  });
}

describe("cursors", () => {
  it("are answered 400 bad_request on every list and the feed when they are neither a record id nor the service's", async () => {
    expect(lists.map((list) => list.path.replace(endpointId, "{id}")).sort()).toEqual([
      "/accounts",
      "/contacts",
      "/custom-fields",
      "/deals",
      "/devices",
      "/events",
      "/health-scores",
      "/notes",
      "/search",
      "/tasks",
      "/touchpoints",
      "/webhook-endpoints/{id}/deliveries",
      "/webhook-endpoints/{id}/replays",
    ]);
    const signed = signedCursor("cm7k2x0a80001northwind0", false);
    // "djMuMS4x" is base64url of v3.1.1, a format the feed never made; "nope" has a record id's form but names none.
    const malformed = ["", "nope", "a".repeat(5_000), "%2B%2F%3D", "a.b", `${signed}x`, "djMuMS4x", "x".repeat(65)];
    for (const { path } of lists) {
      for (const cursor of malformed) {
        // Search needs its q; its cursor is refused the same way.
        const query = path === "/search" ? "?q=cursor&cursor=" : "?cursor=";
        expectCursorRefused(await api("GET", `${path}${query}${cursor}`), `${path} ${cursor.slice(0, 20)}`);
      }
    }
  });

  it("continue after the record a record id names, on every list with and without a sort, as the signed cursor does", async () => {
    let checked = 0;
    for (const { path, sortExample } of lists) {
      if (path === "/events" || path === "/search") continue;
      const key = keyOf(path);
      const custom = CUSTOM_FIELD_LISTS[path] ? ["customFields.rank:desc", "customFields.rank:asc,createdAt:desc"] : [];
      for (const sort of ["", ...(sortExample ? [sortExample] : []), ...custom]) {
        const query = (more: string) => `${path}?${sort ? `sort=${sort}&` : ""}${more}`;
        const all = (await api("GET", query("limit=100"), undefined, STRICT)).body.data.map(
          (item: Record<string, string>) => String(item[key]),
        );
        expect(all.length, `${path} ${sort}`).toBeGreaterThanOrEqual(3);
        for (const [index, id] of all.entries()) {
          const what = `${path} sort=${sort} after ${id}`;
          // The page that ends on the record answers its id as nextCursor, as the seed contract has it.
          expect((await api("GET", query(`limit=${index + 1}`), undefined, STRICT)).body.nextCursor, what).toBe(id);
          const byId = await api("GET", query(`limit=2&cursor=${id}`), undefined, STRICT);
          expect(byId.status, what).toBe(200);
          expect(
            byId.body.data.map((item: Record<string, string>) => String(item[key])),
            what,
          ).toEqual(all.slice(index + 1, index + 3));
          const signed = signedCursor(id, key === "attemptId");
          expect((await api("GET", query(`limit=2&cursor=${signed}`), undefined, STRICT)).body, what).toMatchObject({
            data: byId.body.data,
            hasMore: byId.body.hasMore,
            nextCursor: byId.body.nextCursor,
          });
          checked++;
        }
      }
    }
    // 7 resource lists × 4 records × (2 or 4 orders), health scores, custom fields, deliveries and replays.
    expect(checked).toBeGreaterThanOrEqual(100);
    // Structured search pages as its list does.
    const all = (await api("GET", "/accounts?sort=customFields.rank:desc&limit=100")).body.data;
    const searched = await api("POST", "/accounts/search", {
      sort: "customFields.rank:desc",
      limit: 2,
      cursor: all[0].id,
    });
    expect(searched.body.data).toEqual(all.slice(1, 3));
  });

  it("are 400 for a deleted record's id and for another organisation's, and on quick search for any record id", async () => {
    const account = (await api("POST", "/accounts", { name: "Gone Ltd" })).body.data;
    const task = (await api("POST", "/tasks", { title: "Gone" })).body.data;
    const device = (await api("POST", "/devices", { rmmAgentId: "gone", hostname: "gone", accountId: account.id })).body
      .data;
    expect((await api("DELETE", `/devices/${device.id}`)).status).toBe(200);
    expect((await api("DELETE", `/tasks/${task.id}`)).status).toBe(200);
    expect((await api("DELETE", `/accounts/${account.id}?force=true`)).status).toBe(200);
    for (const [path, id] of [
      ["/accounts", account.id],
      ["/health-scores", account.id],
      ["/tasks", task.id],
      ["/devices", device.id],
    ]) {
      expectCursorRefused(await api("GET", `${path}?cursor=${id}`), `deleted ${path}`);
    }

    const stranger = client(server.url, (await createTestOrg()).key);
    const theirs = (await stranger("POST", "/accounts", { name: "Theirs" })).body.data;
    const theirContact = (await stranger("POST", "/contacts", { email: "x@theirs.example" })).body.data;
    const theirTask = (await stranger("POST", "/tasks", { title: "Theirs" })).body.data;
    const theirEvent = (await stranger("GET", "/events")).body.data[0];
    for (const [path, id] of [
      ["/accounts", theirs.id],
      ["/health-scores", theirs.id],
      ["/contacts", theirContact.id],
      ["/tasks", theirTask.id],
      ["/events", theirEvent.id],
    ]) {
      expectCursorRefused(await api("GET", `${path}?cursor=${id}`), `another organisation's ${path}`);
    }
    // Their signed cursor too: it names a record of their list only.
    expectCursorRefused(await api("GET", `/accounts?cursor=${signedCursor(theirs.id, false)}`), "signed, theirs");

    const ours = (await api("GET", "/accounts?limit=1")).body.data[0];
    expectCursorRefused(await api("GET", `/search?q=cursor&cursor=${ours.id}`), "quick search");
  });
});

describe("events feed cursors", () => {
  it("continue after the event an event id names, as the signed nextCursor of a page ending there does", async () => {
    const all = (await api("GET", "/events?limit=100")).body.data as Array<{ id: string }>;
    expect(all.length).toBeGreaterThanOrEqual(5);
    for (const [index, event] of all.slice(0, 5).entries()) {
      const signed = (await api("GET", `/events?limit=${index + 1}`)).body.nextCursor;
      const byId = await api("GET", `/events?limit=3&cursor=${event.id}`);
      expect(byId.status).toBe(200);
      expect(byId.body.data.map((item: { id: string }) => item.id)).toEqual(
        all.slice(index + 1, index + 4).map((item) => item.id),
      );
      expect((await api("GET", `/events?limit=3&cursor=${signed}`)).body).toMatchObject({
        data: byId.body.data,
        nextCursor: byId.body.nextCursor,
      });
    }
    // An id of no event of the feed is 400; one whose seconds are older than the retention is 410, as its event may
    // be gone.
    const now = Math.floor(Date.now() / 1000);
    expectCursorRefused(await api("GET", `/events?cursor=evt_${now}_AAAAAAAAAAAA`), "unknown event id");
    const expired = await api("GET", `/events?cursor=evt_${now - 40 * 24 * 3600}_AAAAAAAAAAAA`);
    expect(expired.status).toBe(410);
    expect(expired.body.error.code).toBe("cursor_expired");
  });

  it("refuse a cursor forged from an expired event's sequence with a recent time: 400, where the real one is 410", async () => {
    const org = await createTestOrg();
    const feed = client(server.url, org.key);
    const old = new Date(Date.now() - 40 * 24 * 3600_000);
    await prisma().$executeRaw`
      INSERT INTO "Event" ("id", "orgId", "sequence", "name", "resource", "resourceId", "data", "actor", "isTest",
                           "createdAt", "fannedOutAt")
      VALUES (${`evt_expired_${org.orgId}`}, ${org.orgId}, 1, 'account.created', 'account', 'acc_1',
              '{"id":"acc_1"}'::jsonb, '{"type":"system"}', false, ${old}, ${old})`;
    await prisma().eventCounter.create({ data: { orgId: org.orgId, lastSequence: 1 } });
    await feed("POST", "/accounts", { name: "Recent" });
    const oldSeconds = Math.floor(old.getTime() / 1000);
    const nowSeconds = Math.floor(Date.now() / 1000);
    const text = (value: string) => Buffer.from(value).toString("base64url");

    // The visible parts of event 1 (sequence, timestamp) with the time moved into the retention period.
    const forged = await feed("GET", `/events?cursor=${text(`v2.1.${nowSeconds}`)}`);
    expectCursorRefused(forged, "forged");
    expect((await feed("GET", `/events?cursor=${text(`v2.1.${oldSeconds}`)}`)).status).toBe(410);
    expect((await feed("GET", `/events?cursor=${feedCursor(1n, oldSeconds, org.orgId)}`)).status).toBe(410);
    // A signed cursor is the service's only for the organisation it was made for.
    const mine = (await api("GET", "/events?limit=1")).body.nextCursor;
    expectCursorRefused(await feed("GET", `/events?cursor=${mine}`), "another organisation's signed cursor");
  });

  it("still accept an unsigned cursor of the earlier format that names an event with its exact second, answering a signed one", async () => {
    const org = await createTestOrg();
    const feed = client(server.url, org.key);
    await feed("POST", "/accounts", { name: "One" });
    await feed("POST", "/accounts", { name: "Two" });
    const events = (await feed("GET", "/events")).body.data as Array<{ sequence: number; timestamp: string }>;
    const [first, second] = events;
    if (!first || !second) throw new Error("two events expected");
    const v2 = Buffer.from(`v2.${first.sequence}.${Math.floor(Date.parse(first.timestamp) / 1000)}`).toString(
      "base64url",
    );
    const page = await feed("GET", `/events?cursor=${v2}`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((event: { sequence: number }) => event.sequence)).toEqual([second.sequence]);
    expect(page.body.nextCursor).toMatch(/^[A-Za-z0-9_-]{34}$/);
    const later = Buffer.from(`v2.${first.sequence}.${Math.floor(Date.parse(first.timestamp) / 1000) + 7}`);
    expect((await feed("GET", `/events?cursor=${later.toString("base64url")}`)).status).toBe(400);
  });
});

describe("sort", () => {
  const ids = (res: Awaited<ReturnType<typeof api>>) =>
    res.body.data.map((item: Record<string, string>) => item.id ?? item.accountId);

  it("ignores an invalid pair on every list that sorts, answering the default order and naming what it ignored", async () => {
    const sorting = lists.filter((list) => list.sortExample);
    expect(sorting.length).toBe(9);
    for (const { path, sortExample } of sorting) {
      const field = String(sortExample).split(":")[0];
      const byDefault = await api("GET", path);
      expect(byDefault.headers.get("preference-applied")).toBeNull();
      for (const sort of ["colour:desc", `${field}:sideways`, `${field}:asc:x`, ""]) {
        const res = await api("GET", `${path}?sort=${sort}`);
        expect(res.status, `${path} ${sort}`).toBe(200);
        expect(ids(res), `${path} ${sort}`).toEqual(ids(byDefault));
        expect(res.headers.get("preference-applied"), `${path} ${sort}`).toBe("handling=lenient");
        expect(res.headers.get("sort-ignored"), `${path} ${sort}`).toBe(`"${sort}"`);
      }
      // A field named twice: the first naming counts.
      const twice = await api("GET", `${path}?sort=${field},${field}:desc`);
      expect(ids(twice)).toEqual(ids(await api("GET", `${path}?sort=${field}`)));
      expect(twice.headers.get("sort-ignored")).toBe(`"${field}:desc"`);
      // A valid sort is applied with nothing to say.
      const valid = await api("GET", `${path}?sort=${sortExample}`);
      expect(valid.status, path).toBe(200);
      expect(valid.headers.get("preference-applied")).toBeNull();
      expect(valid.headers.get("sort-ignored")).toBeNull();
    }
  });

  it("refuses an invalid pair with 422 naming the allowed fields when the request sends Prefer: handling=strict", async () => {
    for (const { path, sortExample } of lists.filter((list) => list.sortExample)) {
      const field = String(sortExample).split(":")[0];
      for (const sort of ["colour:desc", `${field}:sideways`, `${field},${field}:desc`, `${field}:asc:x`, ""]) {
        const res = await api("GET", `${path}?sort=${sort}`, undefined, STRICT);
        expect(res.status, `${path} ${sort}`).toBe(422);
        expect(res.headers.get("preference-applied")).toBe("handling=strict");
        expect(res.body.error).toMatchObject({
          code: "validation_error",
          details: [{ path: ["sort"], message: expect.stringContaining("allowed fields: ") }],
        });
        expect(res.body.error.details[0].message).toContain(String(field));
      }
      const valid = await api("GET", `${path}?sort=${sortExample}`, undefined, STRICT);
      expect(valid.status, path).toBe(200);
      expect(valid.headers.get("preference-applied")).toBe("handling=strict");
    }
  });

  it("reads Prefer as RFC 7240 writes it, and treats custom fields and structured search alike", async () => {
    const preferring = (prefer: string, path = "/accounts?sort=colour:desc") =>
      api("GET", path, undefined, { Prefer: prefer });
    expect((await preferring('respond-async, Handling="STRICT"; x=1')).status).toBe(422);
    // Only the first instance of a preference counts.
    expect((await preferring("handling=lenient, handling=strict")).status).toBe(200);
    expect((await preferring("return=minimal")).headers.get("sort-ignored")).toBe('"colour:desc"');
    // Named, lenient handling is said even when nothing was ignored.
    const named = await preferring("handling=lenient", "/accounts?sort=name");
    expect(named.headers.get("preference-applied")).toBe("handling=lenient");
    expect(named.headers.get("sort-ignored")).toBeNull();
    // What a structured-field string cannot hold is percent-encoded.
    const accented = await api("GET", `/accounts?sort=${encodeURIComponent('név:"x"')}`);
    expect(accented.headers.get("sort-ignored")).toBe('"n%C3%A9v:\\"x\\""');

    const unknownKey = await api("GET", "/accounts?sort=customFields.nosuch:desc,customFields.rank:desc");
    expect(ids(unknownKey)).toEqual(ids(await api("GET", "/accounts?sort=customFields.rank:desc")));
    expect(unknownKey.headers.get("sort-ignored")).toBe('"customFields.nosuch:desc"');
    const strictKey = await api("GET", "/accounts?sort=customFields.nosuch:desc", undefined, STRICT);
    expect(strictKey.status).toBe(422);
    expect(strictKey.body.error.details[0].message).toContain("customFields.<key>");

    const searched = await api("POST", "/accounts/search", { sort: "colour:desc" });
    expect(ids(searched)).toEqual(ids(await api("GET", "/accounts")));
    expect(searched.headers.get("sort-ignored")).toBe('"colour:desc"');
    expect((await api("POST", "/accounts/search", { sort: "colour:desc" }, STRICT)).status).toBe(422);
  });
});
