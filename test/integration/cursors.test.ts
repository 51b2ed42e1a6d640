// Cursors and sort on every list and the events feed (docs/api-contract.md §4.9, §4.9.1, §6.8): a cursor the service did
// not make is 400 bad_request everywhere, whatever it looks like; a feed cursor forged from an event's visible parts
// (its sequence and timestamp) no longer skips the 410 check; an unknown sort field is 422 naming the allowed ones. The
// lists are read from the served OpenAPI document, so a new list is covered by itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { CURSOR_KINDS, listCursor, sealCursor } from "../../server/services/pagination";
import { client, createTestOrg, startApi, type TestServer } from "../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
/** Every GET that takes `cursor`, its path parameters filled in, and the allowed sort fields' example when it sorts. */
let lists: Array<{ path: string; sortExample?: string }>;

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  const endpoint = (await api("POST", "/webhook-endpoints", { url: "https://psa.example.com/hooks", events: ["*"] }))
    .body.data;
  const document = await fetch(`${server.url}/openapi.json`).then((res) => res.json());
  type Parameter = { name: string; schema?: { example?: string } };
  lists = Object.entries(document.paths as Record<string, { get?: { parameters?: Parameter[] } }>)
    .filter(([, item]) => item.get?.parameters?.some((parameter) => parameter.name === "cursor"))
    .map(([path, item]) => ({
      path: path.replace("{id}", endpoint.id),
      sortExample: item.get?.parameters?.find((parameter) => parameter.name === "sort")?.schema?.example,
    }));
});
afterAll(() => server.close());

const feedCursor = (sequence: bigint, at: number, org: string) => {
  const payload = Buffer.alloc(12);
  payload.writeBigUInt64BE(sequence);
  payload.writeUInt32BE(at, 8);
  return sealCursor(CURSOR_KINDS.feed, payload, org);
};

describe("cursors", () => {
  it("are answered 400 bad_request on every list and the feed when the service did not make them", async () => {
    expect(lists.map((list) => list.path.replace(/wh_\w+/, "{id}")).sort()).toEqual([
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
    const account = (await api("POST", "/accounts", { name: "Cursor Co" })).body.data;
    const signed = listCursor(account.id);
    const flipped = `${signed.slice(0, 4)}${signed[4] === "A" ? "B" : "A"}${signed.slice(5)}`;
    // "djMuMS4x" is base64url of v3.1.1, a format the feed never made.
    const malformed = ["", "nope", "a".repeat(5_000), "%2B%2F%3D", account.id, flipped, `${signed}x`, "djMuMS4x"];
    for (const { path } of lists) {
      for (const cursor of malformed) {
        // Search needs its q; its cursor is refused the same way.
        const query = path === "/search" ? "?q=cursor&cursor=" : "?cursor=";
        const res = await api("GET", `${path}${query}${cursor}`);
        expect(res.status, `${path} ${cursor.slice(0, 20)}`).toBe(400);
        expect(res.body.error).toMatchObject({
          code: "bad_request",
          details: [{ path: ["cursor"], message: expect.any(String) }],
        });
      }
    }
  });

  it("continue a list with the signed nextCursor, compact and opaque", async () => {
    for (const name of ["Page A", "Page B", "Page C"]) await api("POST", "/accounts", { name });
    const first = await api("GET", "/accounts?limit=1");
    expect(first.body.nextCursor).toMatch(/^[A-Za-z0-9_-]{1,128}$/);
    expect(first.body.nextCursor).not.toContain(first.body.data[0].id);
    const second = await api("GET", `/accounts?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.status).toBe(200);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    // Another organisation's key gets 400 for it: it names no record of that organisation's list.
    const stranger = client(server.url, (await createTestOrg()).key);
    expect((await stranger("GET", `/accounts?cursor=${first.body.nextCursor}`)).status).toBe(400);
  });
});

describe("events feed cursors", () => {
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
    expect(forged.status).toBe(400);
    expect(forged.body.error).toMatchObject({ code: "bad_request", details: [{ path: ["cursor"] }] });
    expect((await feed("GET", `/events?cursor=${text(`v2.1.${oldSeconds}`)}`)).status).toBe(410);
    expect((await feed("GET", `/events?cursor=${feedCursor(1n, oldSeconds, org.orgId)}`)).status).toBe(410);
    // A signed cursor is the service's only for the organisation it was made for.
    expect((await feed("GET", `/events?cursor=${feedCursor(1n, nowSeconds, orgId)}`)).status).toBe(400);
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
  it("answers an unknown field, a malformed pair or a repeated field with 422 naming the allowed fields, on every list that sorts", async () => {
    const sorting = lists.filter((list) => list.sortExample);
    expect(sorting.length).toBe(9);
    for (const { path, sortExample } of sorting) {
      const field = String(sortExample).split(":")[0];
      for (const sort of ["colour:desc", `${field}:sideways`, `${field},${field}:desc`, `${field}:asc:x`]) {
        const res = await api("GET", `${path}?sort=${sort}`);
        expect(res.status, `${path} ${sort}`).toBe(422);
        expect(res.body.error).toMatchObject({
          code: "validation_error",
          details: [{ path: ["sort"], message: expect.stringContaining(`allowed fields: `) }],
        });
        expect(res.body.error.details[0].message).toContain(String(field));
      }
      expect((await api("GET", `${path}?sort=${sortExample}`)).status, path).toBe(200);
    }
  });
});
