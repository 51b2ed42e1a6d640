// The usage figures, log and export (docs/architecture.md, "Usage: the roll-up, the chart and the export";
// docs/api-contract.md §4.19): buckets by status class with p95 and top errors, the same before and after the roll-up,
// late rows, the lock that keeps a late row from being missed, filters, keyset paging, the CSV (bytes, BOM, formulas,
// 90-day refusal, abort), roles, isolation and GET /api/v1/usage, against the real PostgreSQL.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as exportCsv } from "../../../app/(settings)/settings/usage/export/route";
import { closeDb } from "../../../server/db/client";
import { prisma } from "../../../server/db/transaction";
import { ensureOrganisation } from "../../../server/platform/organisations";
import type { AuditEntry } from "../../../server/platform/request-log/record";
import { rollUpUsage } from "../../../server/platform/request-log/usage-rollup";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { captureLog } from "../../helpers/log-capture";
import { orgWithRoles, refusal, TEST_ORIGIN, type TestMember } from "../../helpers/members";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(async () => {
  await server.close();
  await closeDb();
});

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
// A 12-hour boundary three days back: every slot of the fixture is closed, so the roll-up takes it.
const BASE = Math.floor((Date.now() - 3 * DAY) / (12 * HOUR)) * 12 * HOUR;

type Row = Omit<AuditEntry, "ip" | "userAgent" | "isTest"> & { orgId: string };

let sequence = 0;
function row(orgId: string, at: number, fields: Partial<Row> = {}): Row {
  sequence += 1;
  return {
    orgId,
    apiKeyId: "key_a",
    requestId: `req_usage_${String(sequence).padStart(8, "0")}`,
    method: "GET",
    path: "/api/v1/accounts",
    query: null,
    status: 200,
    errorCode: null,
    durationMs: 20,
    createdAt: new Date(at),
    ...fields,
  };
}

/** The fixture: 3 hours from BASE, two keys, every class, with known latencies. */
function fixture(orgId: string): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < 60; i++) {
    const at = BASE + i * 3 * 60 * 1000; // every 3 minutes: 10 per 30-minute slot, 6 slots
    rows.push(row(orgId, at, { durationMs: 3 + (i % 5) }));
    if (i % 2 === 0)
      rows.push(row(orgId, at + 1000, { method: "POST", status: 201, apiKeyId: "key_b", durationMs: 40 }));
    if (i % 3 === 0)
      rows.push(row(orgId, at + 2000, { status: 404, errorCode: "not_found", path: "/api/v1/deals/x", durationMs: 8 }));
    if (i % 10 === 0) rows.push(row(orgId, at + 3000, { status: 500, errorCode: "internal_error", durationMs: 900 }));
    if (i % 15 === 0) rows.push(row(orgId, at + 4000, { status: 304, durationMs: 2 }));
  }
  return rows;
}

async function insert(rows: Row[]): Promise<void> {
  await prisma().auditLog.createMany({ data: rows });
}

function exportRequest(member: TestMember | null, query: Record<string, string>): Request {
  const headers = new Headers(member?.request.headers ?? {});
  headers.set("host", new URL(TEST_ORIGIN).host);
  return new Request(`${TEST_ORIGIN}/settings/usage/export?${new URLSearchParams(query)}`, { headers });
}

const iso = (ms: number) => new Date(ms).toISOString();
const range3h = { from: iso(BASE), to: iso(BASE + 3 * HOUR) };

describe("usage figures", () => {
  let orgId: string;
  let owner: TestMember;
  let rows: Row[];
  beforeAll(async () => {
    const org = await orgWithRoles();
    orgId = org.orgId;
    owner = org.members.owner;
    rows = fixture(orgId);
    await insert(rows);
  });

  it("counts buckets by status class with p95 and top errors, the same from the audit log and from the roll-up", async () => {
    const before = await owner.caller.usage.series({ ...range3h, granularity: "30m" });
    expect(before.buckets).toHaveLength(6);
    expect(before.buckets[0]).toEqual({
      start: iso(BASE),
      end: iso(BASE + HOUR / 2),
      requests: 10 + 5 + 4 + 1 + 1,
      byStatusClass: { "2xx": 15, "3xx": 1, "4xx": 4, "5xx": 1 },
      // 21 requests: the 95th percentile is the 20th slowest, a POST of 40 ms (band ≤ 50 ms).
      p95Ms: 50,
    });
    expect(before.totals).toEqual({
      requests: rows.length,
      byStatusClass: { "2xx": 90, "3xx": 4, "4xx": 20, "5xx": 6 },
      p95Ms: 50,
    });
    expect(before.topErrors).toEqual([
      { status: 404, errorCode: "not_found", requests: 20 },
      { status: 500, errorCode: "internal_error", requests: 6 },
    ]);

    const { slots } = await rollUpUsage(new Date(BASE + 4 * HOUR));
    expect(slots).toBeGreaterThanOrEqual(6);
    expect(await prisma().usagePendingSlot.count({ where: { orgId } })).toBe(0);
    expect(await owner.caller.usage.series({ ...range3h, granularity: "30m" })).toEqual(before);

    // 3-hour and 12-hour buckets: the parents of the slots, whole buckets around the asked range.
    const threeHours = await owner.caller.usage.series({ ...range3h, granularity: "3h" });
    expect(threeHours.buckets).toHaveLength(1);
    expect(threeHours.totals).toEqual(before.totals);
    const half = await owner.caller.usage.series({
      from: iso(BASE + HOUR),
      to: iso(BASE + 2 * HOUR),
      granularity: "12h",
    });
    expect(half).toMatchObject({ from: iso(BASE), to: iso(BASE + 12 * HOUR), totals: before.totals });
  });

  it("counts a late row at once and keeps it after the next roll-up", async () => {
    await rollUpUsage(new Date(BASE + 4 * HOUR));
    const late = row(orgId, BASE + 10 * 60 * 1000, { status: 429, errorCode: "rate_limited", durationMs: 1 });
    await insert([late]);
    expect(await prisma().usagePendingSlot.count({ where: { orgId } })).toBe(1);
    const seen = await owner.caller.usage.series({ ...range3h, granularity: "3h" });
    expect(seen.totals.byStatusClass["4xx"]).toBe(21);
    expect(seen.topErrors).toContainEqual({ status: 429, errorCode: "rate_limited", requests: 1 });
    await rollUpUsage(new Date(BASE + 4 * HOUR));
    expect(await owner.caller.usage.series({ ...range3h, granularity: "3h" })).toEqual(seen);
    expect(await owner.caller.usage.series({ ...range3h, granularity: "12h" })).toMatchObject({ totals: seen.totals });
  });

  it("a row inserted while its slot is being rolled up waits for the roll-up and marks the slot again", async () => {
    const slot = new Date(BASE + HOUR);
    const url = process.env.DATABASE_URL as string;
    const rollup = new pg.Client({ connectionString: url });
    const writer = new pg.Client({ connectionString: url });
    await Promise.all([rollup.connect(), writer.connect()]);
    try {
      // The mark must exist for the roll-up to lock it: a first row makes it.
      await insert([row(orgId, slot.getTime() + 1000)]);
      await rollup.query("BEGIN");
      const locked = await rollup.query(
        `SELECT 1 FROM "UsagePendingSlot" WHERE "orgId" = $1 AND "slot" = $2::timestamp FOR UPDATE`,
        [orgId, slot.toISOString()],
      );
      expect(locked.rowCount).toBe(1);
      const writerPid = (await writer.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      const writing = writer.query(
        `INSERT INTO "AuditLog" ("orgId", "requestId", "method", "path", "status", "durationMs", "createdAt")
           VALUES ($1, 'req_usage_racing', 'GET', '/api/v1/accounts', 200, 5, $2::timestamp)`,
        [orgId, new Date(slot.getTime() + 2000).toISOString()],
      );
      // The insert waits for the mark the roll-up holds (its trigger's DO UPDATE locks the mark).
      let waiting = "";
      for (let i = 0; i < 200 && waiting !== "Lock"; i++) {
        const state = await rollup.query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", [writerPid]);
        waiting = state.rows[0]?.wait_event_type ?? "";
        if (waiting !== "Lock") await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(waiting).toBe("Lock");
      // So the roll-up's read does not see the racing row.
      const counted = await rollup.query(
        `SELECT count(*)::int AS n FROM "AuditLog" WHERE "orgId" = $1 AND "requestId" = 'req_usage_racing'`,
        [orgId],
      );
      expect(counted.rows[0].n).toBe(0);
      await rollup.query(`DELETE FROM "UsagePendingSlot" WHERE "orgId" = $1 AND "slot" = $2::timestamp`, [
        orgId,
        slot.toISOString(),
      ]);
      await rollup.query("COMMIT");
      await writing;
      const marks = await prisma().usagePendingSlot.findMany({ where: { orgId } });
      expect(marks.map((mark) => mark.slot.toISOString())).toEqual([slot.toISOString()]);
    } finally {
      await Promise.all([rollup.end(), writer.end()]);
    }
    await rollUpUsage(new Date(BASE + 4 * HOUR));
    const series = await owner.caller.usage.series({ from: iso(BASE + HOUR), to: iso(BASE + 90 * 60 * 1000) });
    expect(series.buckets[0]?.requests).toBe(19 + 2);
  });

  it("filters by key, status class, method and path, from the roll-up and from the audit log", async () => {
    await rollUpUsage(new Date(BASE + 4 * HOUR));
    const total = async (filters: Record<string, string>) =>
      (await owner.caller.usage.series({ ...range3h, granularity: "30m", ...filters })).totals.requests;
    expect(await total({ apiKeyId: "key_b" })).toBe(30);
    expect(await total({ method: "POST" })).toBe(30);
    expect(await total({ status: "5xx" })).toBe(6);
    expect(await total({ status: "404" })).toBe(20);
    expect(await total({ path: "DEALS/" })).toBe(20);
    expect(await total({ path: "/accounts", status: "2xx", method: "GET" })).toBe(60 + 2);
    expect((await refusal(owner.caller.usage.series({ ...range3h, status: "4x" }))).code).toBe("UNPROCESSABLE_CONTENT");
  });

  it("refuses ranges over 90 days or 1,000 buckets and backwards ranges", async () => {
    const refused = await refusal(owner.caller.usage.series({ from: iso(BASE - 91 * DAY), to: iso(BASE) }));
    expect(refused.code).toBe("UNPROCESSABLE_CONTENT");
    expect(refused.message).toBe("The range is longer than 90 days: choose a shorter one");
    expect(
      (await refusal(owner.caller.usage.series({ from: iso(BASE - 30 * DAY), to: iso(BASE), granularity: "30m" })))
        .message,
    ).toMatch(/more than 1000 buckets/);
    expect((await refusal(owner.caller.usage.series({ from: iso(BASE), to: iso(BASE) }))).code).toBe(
      "UNPROCESSABLE_CONTENT",
    );
  });

  it("pages the log of a range newest first, 50 a page, and opens one request", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await owner.caller.usage.auditLog({ ...range3h, method: "GET", cursor, limit: 50 });
      seen.push(...page.data.map((entry) => entry.requestId));
      cursor = page.hasMore ? (page.nextCursor ?? undefined) : undefined;
      pages += 1;
    } while (cursor);
    const expected = await prisma().auditLog.count({
      where: { orgId, method: "GET", createdAt: { gte: new Date(BASE), lt: new Date(BASE + 3 * HOUR) } },
    });
    expect(seen).toHaveLength(expected);
    expect(new Set(seen).size).toBe(expected);
    expect(pages).toBe(Math.ceil(expected / 50));
    const first = (await owner.caller.usage.auditLog({ ...range3h, limit: 1 })).data[0];
    expect(await owner.caller.usage.request({ id: first?.id ?? "" })).toEqual(first);
  });
});

describe("CSV export", () => {
  let orgId: string;
  let members: Awaited<ReturnType<typeof orgWithRoles>>["members"];
  beforeAll(async () => {
    ({ orgId, members } = await orgWithRoles());
  });

  it("streams exactly the filtered rows with a BOM, a header and formulas neutralised", async () => {
    const rows = fixture(orgId);
    rows.push(
      row(orgId, BASE + 5000, { path: '=HYPERLINK("http://x")', query: "+SUM(1)", method: "GET" }),
      row(orgId, BASE + 6000, { path: "@cmd", query: "-2+3", method: "GET" }),
      row(orgId, BASE + 7000, { path: "\tpath", query: "\rq", method: "GET", errorCode: 'a,"b"' }),
    );
    await insert(rows);
    const response = await exportCsv(exportRequest(members.viewer, { ...range3h, method: "GET" }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toMatch(
      /^attachment; filename="usage-team-[a-f0-9]+-\d{8}T\d{4}-\d{8}T\d{4}\.csv"$/,
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder().decode(bytes.slice(3));
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("time,request_id,method,path,query,status,error_code,duration_ms,api_key_id,test");
    expect(lines).toHaveLength(1 + rows.filter((r) => r.method === "GET").length);
    expect(text).toContain(`,GET,"'=HYPERLINK(""http://x"")",'+SUM(1),200,`);
    expect(text).toContain(",GET,'@cmd,'-2+3,200,");
    expect(text).toContain(`,GET,'\tpath,"'\rq",200,"a,""b""",20,key_a,false`);
    // Newest first.
    expect(lines[1]).toMatch(
      new RegExp(
        `^${new Date(Math.max(...rows.filter((r) => r.method === "GET").map((r) => r.createdAt.getTime()))).toISOString()}`,
      ),
    );
  });

  it("names the file after the range it covers, which is the range asked for: the page's 24.5 hours, not wider buckets", async () => {
    const { orgId: own, slug, members: mine } = await orgWithRoles();
    // What the page links after a 24-hour range ending at BASE + 40 minutes: its chart's 30-minute buckets, 24.5 hours.
    const from = BASE - DAY + 30 * 60 * 1000;
    const to = BASE + 60 * 60 * 1000;
    const minute = 60 * 1000;
    await insert([
      row(own, from - minute, { requestId: "req_usage_before_range" }),
      row(own, from, { requestId: "req_usage_first_in_range" }),
      row(own, to - 1000, { requestId: "req_usage_last_in_range" }),
      row(own, to + minute, { requestId: "req_usage_after_range" }),
    ]);
    const response = await exportCsv(exportRequest(mine.viewer, { from: iso(from), to: iso(to) }));
    expect(response.status).toBe(200);
    const stamp = (ms: number) => iso(ms).slice(0, 16).replace(/[-:]/g, "");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="usage-${slug}-${stamp(from)}-${stamp(to)}.csv"`,
    );
    const rows = new TextDecoder()
      .decode(new Uint8Array(await response.arrayBuffer()).slice(3))
      .trimEnd()
      .split("\n");
    expect(rows.slice(1).map((line) => line.split(",")[1])).toEqual([
      "req_usage_last_in_range",
      "req_usage_first_in_range",
    ]);
  });

  it("refuses a range over 90 days with the reason, a signed-out browser with 401, and shows no other organisation's rows", async () => {
    const other = await createTestOrg();
    const earlier = { from: iso(BASE - 2 * DAY), to: iso(BASE - DAY) };
    await insert([row(other.orgId, BASE - 2 * DAY + 1000, { requestId: "req_usage_other_org" })]);
    const refused = await exportCsv(exportRequest(members.developer, { from: iso(BASE - 100 * DAY), to: iso(BASE) }));
    expect(refused.status).toBe(422);
    expect(await refused.text()).toBe("The range is longer than 90 days: choose a shorter one\n");
    const signedOut = await exportCsv(exportRequest(null, earlier));
    expect(signedOut.status).toBe(401);
    const mine = await exportCsv(exportRequest(members.admin, earlier));
    const text = await mine.text();
    expect(text).not.toContain("req_usage_other_org");
    expect(text.trimEnd().split("\n")).toHaveLength(1);
  });

  it("stops reading pages when the download is cancelled", async () => {
    const many = Array.from({ length: 5_000 }, (_, i) => row(orgId, BASE + i * 100));
    await insert(many);
    const log = captureLog("info");
    try {
      const response = await exportCsv(exportRequest(members.owner, range3h));
      const reader = response.body?.getReader();
      const first = await reader?.read();
      expect(first?.done).toBe(false);
      await reader?.cancel();
      let ended: Record<string, unknown> | undefined;
      for (let i = 0; i < 100 && !ended; i++) {
        ended = log.lines().find((line) => line.msg === "usage export ended" && line.orgId === orgId);
        if (!ended) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(ended).toMatchObject({ cancelled: true });
      // 20 pages of 250 make the whole log; a cancelled download read a few.
      expect(ended?.pages).toBeLessThan(5);
      expect(ended?.rows).toBeLessThan(5_000);
    } finally {
      log.restore();
    }
  });
});

describe("CSV export and the organisation's slots for expensive work", () => {
  it("holds one slot while a download runs: with every slot taken another is 429 with the reason, and served once it ends", async () => {
    // 30 requests a minute organisation-wide: one slot (docs/api-contract.md §8.5).
    const { orgId, members } = await orgWithRoles();
    await ensureOrganisation((await prisma().organisation.findUniqueOrThrow({ where: { id: orgId } })).slug, {
      limits: { perKey: 30, perOrg: 30 },
    });
    await insert(Array.from({ length: 3_000 }, (_, i) => row(orgId, BASE + i * 100)));
    const first = await exportCsv(exportRequest(members.owner, range3h));
    expect(first.status).toBe(200);
    const reader = first.body?.getReader();
    expect((await reader?.read())?.done).toBe(false);
    const refused = await exportCsv(exportRequest(members.admin, range3h));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.text()).toContain("its limit of 30 requests a minute runs 1 at a time");
    await reader?.cancel();
    let again = await exportCsv(exportRequest(members.admin, range3h));
    for (let i = 0; i < 50 && again.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await exportCsv(exportRequest(members.admin, range3h));
    }
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });
});

describe("GET /api/v1/usage", () => {
  it("answers the buckets with admin:read, refuses without it, and counts only the key's organisation", async () => {
    const org = await createTestOrg(["admin:read"]);
    const other = await createTestOrg(["admin:read"]);
    await insert(fixture(org.orgId));
    await insert([row(other.orgId, BASE + 1000)]);
    const api = client(server.url, org.key);
    const answer = await api("GET", `/usage?from=${range3h.from}&to=${range3h.to}&granularity=30m`);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({
      from: range3h.from,
      to: range3h.to,
      granularity: "30m",
      totals: { requests: 120, byStatusClass: { "2xx": 90, "3xx": 4, "4xx": 20, "5xx": 6 }, p95Ms: 50 },
    });
    expect(answer.body.data.buckets).toHaveLength(6);
    const defaults = await api("GET", "/usage");
    expect(defaults.status).toBe(200);
    expect(defaults.body.data.granularity).toBe("30m");
    expect(defaults.body.data.buckets.length).toBeGreaterThanOrEqual(48);
    const week = await api("GET", `/usage?from=${iso(BASE - 6 * DAY)}&to=${iso(BASE)}`);
    expect(week.body.data.granularity).toBe("3h");
    expect((await api("GET", `/usage?from=${iso(BASE - 91 * DAY)}&to=${iso(BASE)}`)).status).toBe(422);
    expect((await api("GET", "/usage?granularity=1m")).status).toBe(422);
    expect((await api("GET", "/usage?bucket=1")).status).toBe(422);
    const narrow = await createTestOrg(["accounts:read"]);
    expect((await client(server.url, narrow.key)("GET", "/usage")).status).toBe(403);
  });
});

describe("roles", () => {
  it("every role sees the figures, the log, a request and the export", async () => {
    const { members } = await orgWithRoles();
    for (const member of Object.values(members)) {
      expect((await member.caller.usage.series(range3h)).buckets).toHaveLength(6);
      expect((await member.caller.usage.auditLog(range3h)).data).toEqual([]);
      expect((await exportCsv(exportRequest(member, range3h))).status).toBe(200);
    }
  });
});
