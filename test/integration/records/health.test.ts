// Health scores (docs/api-contract.md §2.10, §4.7): the score of a fixed data set against values computed by hand, the
// signal push (validation, effect, no event), the 90-day history, the list with its pagination, and isolation.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../../server/db/ids";
import { prisma } from "../../../server/db/transaction";
import { refreshHealthScores } from "../../../server/records/health/refresh";
import { client, createKey, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
beforeAll(async () => {
  server = await startApi();
});
afterAll(() => server.close());

const DAY = 86_400_000;
const ago = (days: number, extraMs = 0) => new Date(Date.now() - days * DAY - extraMs);
const dayOf = (time: Date | string) => new Date(time).toISOString().slice(0, 10);

async function createAccount(
  orgId: string,
  name: string,
  extra: { createdAt?: Date; lifecycleStatus?: "CHURNED" } = {},
) {
  return prisma().account.create({ data: { orgId, name, ...extra } });
}

async function overdueTasks(orgId: string, accountId: string, count: number) {
  await prisma().task.createMany({
    data: Array.from({ length: count }, (_, i) => ({ orgId, accountId, title: `Overdue ${i}`, dueAt: ago(1) })),
  });
}

/**
 * The hand-computed account (docs/architecture.md, "Health scores"): devices 32.5 → 8.13, engagement 25 → 6.25, pipeline 75 → 15,
 * service 40 → 6, external 70 → 10.5; score 45.88 → 46, MEDIUM.
 */
async function seedScoredAccount(orgId: string) {
  const account = await createAccount(orgId, "Northwind", { createdAt: ago(400) });
  const accountId = account.id;
  await prisma().device.createMany({
    data: [
      { orgId, accountId, rmmAgentId: newId(), hostname: "d1", isOnline: false },
      { orgId, accountId, rmmAgentId: newId(), hostname: "d2", isEndOfLife: true },
      { orgId, accountId, rmmAgentId: newId(), hostname: "d3", isEndOfLife: true, patchCompliant: false },
      { orgId, accountId, rmmAgentId: newId(), hostname: "d4" },
    ],
  });
  const lastTouchpointAt = ago(30, 3_600_000);
  await prisma().touchpoint.createMany({
    data: [
      { orgId, accountId, type: "CALL", direction: "OUTBOUND", occurredAt: lastTouchpointAt },
      { orgId, accountId, type: "EMAIL", direction: "INBOUND", occurredAt: ago(60) },
      // Scheduled in the future: not engagement yet.
      { orgId, accountId, type: "MEETING", direction: "OUTBOUND", occurredAt: ago(-5) },
    ],
  });
  const deal = (name: string, fields: Record<string, unknown>) => ({ orgId, accountId, name, ...fields });
  await prisma().deal.createMany({
    data: [
      deal("Renewal open", { type: "RENEWAL", stage: "NEGOTIATION" }),
      deal("Renewal won", { type: "RENEWAL", stage: "CLOSED_WON", closedAt: ago(5) }),
      deal("Lost recently", { stage: "CLOSED_LOST", closedAt: ago(10) }),
      deal("Lost long ago", { stage: "CLOSED_LOST", closedAt: ago(120) }),
      deal("New business", { stage: "PROPOSAL" }),
    ],
  });
  const openDeal = await prisma().deal.findFirstOrThrow({ where: { accountId, name: "New business" } });
  await prisma().task.createMany({
    data: [
      { orgId, accountId, title: "Overdue", dueAt: ago(2) },
      // Linked through its deal only.
      { orgId, dealId: openDeal.id, title: "Overdue via deal", status: "IN_PROGRESS", dueAt: ago(1) },
      { orgId, accountId, title: "Done", status: "DONE", dueAt: ago(3) },
      { orgId, accountId, title: "Cancelled", status: "CANCELLED", dueAt: ago(3) },
      { orgId, accountId, title: "Not due yet", dueAt: ago(-3) },
      { orgId, accountId, title: "No due date" },
    ],
  });
  const signal = (score: number, expiresAt: Date) => ({
    orgId,
    accountId,
    source: "psa",
    type: "escalation",
    severity: "MEDIUM" as const,
    score,
    occurredAt: ago(5),
    expiresAt,
  });
  await prisma().healthSignal.createMany({
    data: [signal(50, ago(-20)), signal(40, ago(-1)), signal(90, ago(1))],
  });
  return { account, lastTouchpointAt };
}

describe("GET /health-scores/{accountId}", () => {
  it("computes the score of a fixed data set as computed by hand", async () => {
    const org = await createTestOrg(["health:read"]);
    const api = client(server.url, org.key);
    const { account, lastTouchpointAt } = await seedScoredAccount(org.orgId);

    const res = await api("GET", `/health-scores/${account.id}`);
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({
      accountId: account.id,
      accountName: "Northwind",
      lifecycleStatus: "PROSPECT",
      score: 46,
      riskLevel: "MEDIUM",
    });
    expect(Math.abs(Date.parse(data.computedAt) - Date.now())).toBeLessThan(60_000);
    expect(data.signals).toEqual([
      {
        key: "devices",
        label: "Device health",
        weight: 25,
        value: 32.5,
        contribution: 8.13,
        detail: "1 of 4 devices offline, 2 end-of-life, 1 not patch-compliant.",
        inputs: { total: 4, offline: 1, endOfLife: 2, notPatchCompliant: 1 },
      },
      {
        key: "engagement",
        label: "Engagement",
        weight: 25,
        value: 25,
        contribution: 6.25,
        detail: "Last touchpoint 30 days ago.",
        inputs: { daysSinceLastTouchpoint: 30, lastTouchpointAt: lastTouchpointAt.toISOString() },
      },
      {
        key: "pipeline",
        label: "Pipeline",
        weight: 20,
        value: 75,
        contribution: 15,
        detail: "1 open renewal deal, 1 deal lost in the last 90 days.",
        inputs: { openRenewals: 1, lostDealsLast90Days: 1 },
      },
      {
        key: "service",
        label: "Service",
        weight: 15,
        value: 40,
        contribution: 6,
        detail: "2 overdue tasks.",
        inputs: { overdueTasks: 2 },
      },
      {
        key: "external",
        label: "External signals",
        weight: 15,
        value: 70,
        contribution: 10.5,
        detail: "2 active signals (scores 50, 40).",
        inputs: { activeSignals: 2 },
      },
    ]);
    expect(data.externalSignals.map((s: { score: number }) => s.score).sort()).toEqual([40, 50]);
    for (const signal of data.externalSignals) {
      expect(signal).toMatchObject({ accountId: account.id, source: "psa", type: "escalation", active: true });
      expect(signal.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    // Computed for the answer, stored nowhere: a read writes no row.
    expect(await prisma().healthSnapshot.count({ where: { accountId: account.id } })).toBe(0);
    expect(await prisma().healthScore.count({ where: { accountId: account.id } })).toBe(0);
    expect(data.history.at(-1)).toEqual({ date: dayOf(data.computedAt), score: 46 });

    // The health refresh (an Inngest function while a worker runs) stores the same score and today's snapshot.
    await refreshHealthScores(org.orgId, [account.id]);
    const snapshot = await prisma().healthSnapshot.findFirstOrThrow({ where: { accountId: account.id } });
    expect(snapshot).toMatchObject({ orgId: org.orgId, score: 46 });
    expect(dayOf(snapshot.day)).toBe(dayOf(data.computedAt));
    expect(await prisma().healthScore.findUniqueOrThrow({ where: { accountId: account.id } })).toMatchObject({
      score: 46,
      riskLevel: "MEDIUM",
      signals: data.signals,
    });
  });

  it("scores an account with no data 0 (LOW), and 25 (MEDIUM) when created long ago", async () => {
    const org = await createTestOrg(["health:read"]);
    const api = client(server.url, org.key);
    const fresh = await createAccount(org.orgId, "Fresh");
    const old = await createAccount(org.orgId, "Old", { createdAt: ago(200) });
    const freshScore = (await api("GET", `/health-scores/${fresh.id}`)).body.data;
    expect(freshScore).toMatchObject({ score: 0, riskLevel: "LOW", externalSignals: [] });
    expect(freshScore.signals.map((s: { contribution: number }) => s.contribution)).toEqual([0, 0, 0, 0, 0]);
    expect(freshScore.signals[1].detail).toBe("No touchpoint logged; 0 days since the account was created.");
    const oldScore = (await api("GET", `/health-scores/${old.id}`)).body.data;
    expect(oldScore).toMatchObject({ score: 25, riskLevel: "MEDIUM" });
  });

  it("returns exactly 90 daily history points, carrying the last known score forward", async () => {
    const org = await createTestOrg(["health:read"]);
    const api = client(server.url, org.key);
    const account = await createAccount(org.orgId, "Historic");
    const today = Date.parse(`${dayOf(new Date())}T00:00:00.000Z`);
    const day = (n: number) => new Date(today - n * DAY);
    await prisma().healthSnapshot.createMany({
      data: [
        { orgId: org.orgId, accountId: account.id, day: day(120), score: 10 },
        { orgId: org.orgId, accountId: account.id, day: day(40), score: 30 },
        { orgId: org.orgId, accountId: account.id, day: day(39), score: 35 },
        { orgId: org.orgId, accountId: account.id, day: day(0), score: 99 },
      ],
    });
    const data = (await api("GET", `/health-scores/${account.id}`)).body.data;
    const history: { date: string; score: number | null }[] = data.history;
    expect(history).toHaveLength(90);
    expect(history[0]).toEqual({ date: dayOf(day(89)), score: 10 });
    for (let i = 1; i < 90; i++) {
      expect(Date.parse(history[i]?.date ?? "") - Date.parse(history[i - 1]?.date ?? "")).toBe(DAY);
    }
    expect(history[49]).toEqual({ date: dayOf(day(40)), score: 30 });
    expect(history[50]).toEqual({ date: dayOf(day(39)), score: 35 });
    expect(history[88]).toEqual({ date: dayOf(day(1)), score: 35 });
    // Today's stale 99 is replaced by the score computed now.
    expect(history[89]).toEqual({ date: dayOf(data.computedAt), score: data.score });
    expect(data.score).toBe(0);

    const blank = await createAccount(org.orgId, "No history");
    const blankHistory = (await api("GET", `/health-scores/${blank.id}`)).body.data.history;
    expect(blankHistory).toHaveLength(90);
    expect(blankHistory.slice(0, 89).every((p: { score: number | null }) => p.score === null)).toBe(true);
    expect(blankHistory[89].score).toBe(0);
  });

  it("answers 404 for an unknown account or another organisation's, 400 for a malformed id", async () => {
    const a = await createTestOrg(["health:read"]);
    const b = await createTestOrg(["health:write"]);
    const foreign = await createAccount(a.orgId, "A's account");
    const apiB = client(server.url, b.key);
    for (const path of [`/health-scores/${foreign.id}`, "/health-scores/doesnotexist123"]) {
      const res = await apiB("GET", path);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await apiB("GET", "/health-scores/bad%20id!")).status).toBe(400);
    expect(await prisma().healthSnapshot.count({ where: { accountId: foreign.id } })).toBe(0);
  });

  it("needs health:read (write implies read, admin:read reads)", async () => {
    const org = await createTestOrg(["accounts:read"]);
    const account = await createAccount(org.orgId, "Scoped");
    const res = await client(server.url, org.key)("GET", `/health-scores/${account.id}`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("insufficient_scope");
    expect((await client(server.url, org.key)("GET", "/health-scores")).status).toBe(403);
    for (const scopes of [["health:write"], ["admin:read"]]) {
      const key = await createKey(org.orgId, scopes);
      expect((await client(server.url, key)("GET", `/health-scores/${account.id}`)).status).toBe(200);
    }
    expect((await client(server.url)("GET", `/health-scores/${account.id}`)).status).toBe(401);
  });

  it("lists the 100 most recent active signals and counts all of them in the score", async () => {
    const org = await createTestOrg();
    const account = await createAccount(org.orgId, "Noisy");
    await prisma().healthSignal.createMany({
      data: Array.from({ length: 101 }, (_, i) => ({
        orgId: org.orgId,
        accountId: account.id,
        source: "psa",
        type: `alert-${i}`,
        severity: "LOW" as const,
        score: 1,
        occurredAt: ago(0, (i + 1) * 60_000),
        expiresAt: ago(-1),
      })),
    });
    const res = await client(server.url, org.key)("GET", `/health-scores/${account.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.externalSignals).toHaveLength(100);
    expect(res.body.data.externalSignals[0].type).toBe("alert-0");
    expect(res.body.data.externalSignals[99].type).toBe("alert-99");
    const external = res.body.data.signals.find((signal: { key: string }) => signal.key === "external");
    expect(external.inputs.activeSignals).toBe(101);
  });
});

describe("POST /health-scores/{accountId}/signals", () => {
  it("stores the signal, answers 201 with the new score and records no event", async () => {
    const org = await createTestOrg(["health:write"], { isTest: true });
    const api = client(server.url, org.key);
    const { account } = await seedScoredAccount(org.orgId);
    expect((await api("GET", `/health-scores/${account.id}`)).body.data.score).toBe(46);

    const res = await api("POST", `/health-scores/${account.id}/signals`, {
      source: "nps-survey",
      type: "detractor",
      severity: "CRITICAL",
      score: 100,
      message: "NPS 2: considering other providers",
    });
    expect(res.status).toBe(201);
    const { signal, ...score } = res.body.data;
    // External becomes 100 → 15; 8.13 + 6.25 + 15 + 6 + 15 = 50.38 → 50, HIGH.
    expect(score).toMatchObject({ accountId: account.id, score: 50, riskLevel: "HIGH" });
    expect(signal).toMatchObject({
      accountId: account.id,
      source: "nps-survey",
      type: "detractor",
      severity: "CRITICAL",
      score: 100,
      message: "NPS 2: considering other providers",
      active: true,
    });
    // Defaults: occurredAt now, expiresAt 30 days later.
    expect(Math.abs(Date.parse(signal.occurredAt) - Date.now())).toBeLessThan(60_000);
    expect(Date.parse(signal.expiresAt) - Date.parse(signal.occurredAt)).toBe(30 * DAY);
    const row = await prisma().healthSignal.findUniqueOrThrow({ where: { id: signal.id } });
    expect(row).toMatchObject({ orgId: org.orgId, accountId: account.id, score: 100, severity: "CRITICAL" });

    const after = (await api("GET", `/health-scores/${account.id}`)).body.data;
    expect(after).toMatchObject({ score: 50, riskLevel: "HIGH" });
    expect(after.signals[4]).toMatchObject({ value: 100, contribution: 15, inputs: { activeSignals: 3 } });
    expect(after.externalSignals[0]).toEqual(signal);
    expect((await prisma().healthSnapshot.findFirstOrThrow({ where: { accountId: account.id } })).score).toBe(50);
    expect(await prisma().event.count({ where: { orgId: org.orgId } })).toBe(0);
  });

  it("stores an already expired signal without counting it", async () => {
    const org = await createTestOrg(["health:write"]);
    const api = client(server.url, org.key);
    const account = await createAccount(org.orgId, "Expired");
    const res = await api("POST", `/health-scores/${account.id}/signals`, {
      source: "rmm",
      type: "backup_failed",
      severity: "HIGH",
      score: 80,
      occurredAt: ago(40).toISOString(),
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ score: 0, riskLevel: "LOW", signal: { active: false, message: null } });
    expect(Date.parse(res.body.data.signal.expiresAt) - Date.parse(res.body.data.signal.occurredAt)).toBe(30 * DAY);
    expect((await api("GET", `/health-scores/${account.id}`)).body.data.externalSignals).toEqual([]);
  });

  it("accepts explicit times with an offset and combines signals", async () => {
    const org = await createTestOrg(["health:write"]);
    const api = client(server.url, org.key);
    const account = await createAccount(org.orgId, "Combined");
    const push = (score: number) =>
      api("POST", `/health-scores/${account.id}/signals`, {
        source: "psa",
        type: "ticket_volume",
        severity: "MEDIUM",
        score,
        occurredAt: "2026-01-01T10:00:00+02:00",
        expiresAt: "2999-01-01T00:00:00Z",
      });
    const first = await push(50);
    expect(first.body.data.signal).toMatchObject({
      occurredAt: "2026-01-01T08:00:00.000Z",
      expiresAt: "2999-01-01T00:00:00.000Z",
    });
    // 50 → 7.5 → 8; then 100 × (1 − 0.5 × 0.5) = 75 → 11.25 → 11.
    expect(first.body.data.score).toBe(8);
    expect((await push(50)).body.data.score).toBe(11);
  });

  it("refuses invalid bodies with 422 details and creates nothing", async () => {
    const org = await createTestOrg(["health:write"]);
    const api = client(server.url, org.key);
    const account = await createAccount(org.orgId, "Validated");
    const path = `/health-scores/${account.id}/signals`;
    const paths = async (body: unknown) => {
      const res = await api("POST", path, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
      return res.body.error.details.map((d: { path: string[] }) => d.path.join(".")).sort();
    };
    expect(await paths({})).toEqual(["score", "severity", "source", "type"]);
    const valid = { source: "psa", type: "x", severity: "LOW", score: 10 };
    expect(await paths({ ...valid, score: 101 })).toEqual(["score"]);
    expect(await paths({ ...valid, score: -1 })).toEqual(["score"]);
    expect(await paths({ ...valid, score: 12.5 })).toEqual(["score"]);
    expect(await paths({ ...valid, score: "50" })).toEqual(["score"]);
    expect(await paths({ ...valid, severity: "SEVERE" })).toEqual(["severity"]);
    expect(await paths({ ...valid, source: "  " })).toEqual(["source"]);
    expect(await paths({ ...valid, colour: "red" })).toEqual(["colour"]);
    expect(await paths({ ...valid, occurredAt: "yesterday" })).toEqual(["occurredAt"]);
    expect(await paths({ ...valid, expiresAt: "2026-01-01" })).toEqual(["expiresAt"]);
    expect(await paths({ ...valid, occurredAt: ago(-1).toISOString() })).toEqual(["occurredAt"]);
    expect(await paths({ ...valid, occurredAt: ago(2).toISOString(), expiresAt: ago(3).toISOString() })).toEqual([
      "expiresAt",
    ]);
    expect(await paths({ ...valid, occurredAt: ago(2).toISOString(), expiresAt: ago(2).toISOString() })).toEqual([
      "expiresAt",
    ]);
    expect((await api("POST", path, "{not json")).status).toBe(400);
    expect(await prisma().healthSignal.count({ where: { orgId: org.orgId } })).toBe(0);
  });

  it("answers 404 for another organisation's account, needs health:write, creates nothing", async () => {
    const a = await createTestOrg(["health:read"]);
    const b = await createTestOrg(["health:write"]);
    const foreign = await createAccount(a.orgId, "A's account");
    const body = { source: "psa", type: "x", severity: "LOW", score: 10 };
    const res = await client(server.url, b.key)("POST", `/health-scores/${foreign.id}/signals`, body);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    const readOnly = await client(server.url, a.key)("POST", `/health-scores/${foreign.id}/signals`, body);
    expect(readOnly.status).toBe(403);
    expect(await prisma().healthSignal.count({ where: { accountId: foreign.id } })).toBe(0);
  });
});

describe("GET /health-scores", () => {
  let api: ReturnType<typeof client>;
  let orgId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const org = await createTestOrg(["health:read"]);
    orgId = org.orgId;
    api = client(server.url, org.key);
    // score: zero 0, zero2 0, one 3 (1 overdue → 20 → 3), three 9, medium 25 (5 overdue + 1 lost: 15 + 10),
    // high 50 (5 overdue + 2 lost + a 100 signal: 15 + 20 + 15), churned 0.
    for (const name of ["zero", "zero2", "one", "three", "medium", "high"]) {
      ids[name] = (await createAccount(orgId, name)).id;
    }
    ids.churned = (await createAccount(orgId, "churned", { lifecycleStatus: "CHURNED" })).id;
    await overdueTasks(orgId, ids.one as string, 1);
    await overdueTasks(orgId, ids.three as string, 3);
    await overdueTasks(orgId, ids.medium as string, 5);
    await overdueTasks(orgId, ids.high as string, 5);
    const lost = (accountId: string) => ({
      orgId,
      accountId,
      name: "Lost",
      stage: "CLOSED_LOST" as const,
      closedAt: ago(1),
    });
    await prisma().deal.createMany({
      data: [lost(ids.medium as string), lost(ids.high as string), lost(ids.high as string)],
    });
    await prisma().healthSignal.create({
      data: {
        orgId,
        accountId: ids.high as string,
        source: "psa",
        type: "x",
        severity: "CRITICAL",
        score: 100,
        occurredAt: ago(1),
        expiresAt: ago(-10),
      },
    });
    // What the health refresh does while a worker runs (the rows were written behind the services' back).
    await refreshHealthScores(orgId);
  });

  const names = (data: { accountId: string }[]) =>
    data.map((item) => Object.entries(ids).find(([, id]) => id === item.accountId)?.[0]);
  const byIdDesc = (a: string, b: string) => ((ids[a] as string) < (ids[b] as string) ? 1 : -1);

  it("lists every account riskiest first from the stored scores, with the list envelope; a read writes nothing", async () => {
    const res = await api("GET", "/health-scores");
    expect(res.status).toBe(200);
    const zeros = ["zero", "zero2", "churned"].sort(byIdDesc);
    expect(names(res.body.data)).toEqual(["high", "medium", "three", "one", ...zeros]);
    expect(res.body.data.map((item: { score: number }) => item.score)).toEqual([50, 25, 9, 3, 0, 0, 0]);
    expect(res.body.data[0]).toMatchObject({ accountName: "high", riskLevel: "HIGH", lifecycleStatus: "PROSPECT" });
    expect(res.body.data[0].signals).toHaveLength(5);
    expect(res.body.data[0].history).toBeUndefined();
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(res.body.data.at(-1).accountId);
    const snapshots = await prisma().healthSnapshot.findMany({ where: { orgId } });
    expect(snapshots).toHaveLength(7);
    expect(snapshots.find((s) => s.accountId === ids.high)?.score).toBe(50);
    // Reads write nothing: the snapshots are the refresh's, untouched.
    await api("GET", "/health-scores");
    const again = await prisma().healthSnapshot.findMany({ where: { orgId } });
    expect(again.map((s) => [s.id, s.updatedAt.getTime()]).sort()).toEqual(
      snapshots.map((s) => [s.id, s.updatedAt.getTime()]).sort(),
    );
  });

  it("agrees with the single-account endpoint", async () => {
    const list = (await api("GET", "/health-scores?limit=100")).body.data;
    for (const item of list) {
      const one = (await api("GET", `/health-scores/${item.accountId}`)).body.data;
      expect({ ...one, computedAt: item.computedAt, externalSignals: undefined, history: undefined }).toEqual({
        ...item,
        externalSignals: undefined,
        history: undefined,
      });
    }
  });

  it("sorts by score and accountName in both directions; unknown sort fields fall back to score:desc", async () => {
    const zerosAsc = ["zero", "zero2", "churned"].sort((a, b) => -byIdDesc(a, b));
    expect(names((await api("GET", "/health-scores?sort=score:asc")).body.data)).toEqual([
      ...zerosAsc,
      "one",
      "three",
      "medium",
      "high",
    ]);
    expect(names((await api("GET", "/health-scores?sort=accountName:asc")).body.data)).toEqual([
      "churned",
      "high",
      "medium",
      "one",
      "three",
      "zero",
      "zero2",
    ]);
    expect(names((await api("GET", "/health-scores?sort=accountName:desc")).body.data)).toEqual([
      "zero2",
      "zero",
      "three",
      "one",
      "medium",
      "high",
      "churned",
    ]);
    const ignored = await api("GET", "/health-scores?sort=colour:desc");
    expect(names(ignored.body.data)).toEqual(names((await api("GET", "/health-scores")).body.data));
    expect(ignored.headers.get("sort-ignored")).toBe('"colour:desc"');
    const unknown = await api("GET", "/health-scores?sort=colour:desc", undefined, { Prefer: "handling=strict" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].message).toContain("allowed fields: score, accountName");
  });

  it("filters by riskLevel and lifecycle", async () => {
    expect(names((await api("GET", "/health-scores?riskLevel=HIGH")).body.data)).toEqual(["high"]);
    expect(names((await api("GET", "/health-scores?riskLevel=MEDIUM")).body.data)).toEqual(["medium"]);
    expect((await api("GET", "/health-scores?riskLevel=CRITICAL")).body).toMatchObject({
      data: [],
      hasMore: false,
      nextCursor: null,
    });
    expect((await api("GET", "/health-scores?riskLevel=LOW")).body.data).toHaveLength(5);
    expect(names((await api("GET", "/health-scores?lifecycle=CHURNED")).body.data)).toEqual(["churned"]);
    const bad = await api("GET", "/health-scores?riskLevel=SEVERE");
    expect(bad.status).toBe(422);
    expect(bad.body.error.details[0].path).toEqual(["riskLevel"]);
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    for (const sort of ["", "score:asc", "accountName:asc", "accountName:desc"]) {
      const sortParam = sort ? `&sort=${sort}` : "";
      const full = (await api("GET", `/health-scores?limit=100${sortParam}`)).body.data.map(
        (item: { accountId: string }) => item.accountId,
      );
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await api("GET", `/health-scores?limit=2${sortParam}${cursor ? `&cursor=${cursor}` : ""}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((item: { accountId: string }) => item.accountId));
        expect(res.body.nextCursor).toBe(res.body.data.at(-1)?.accountId ?? null);
        if (!res.body.hasMore) break;
        expect(res.body.data).toHaveLength(2);
        cursor = res.body.nextCursor;
      }
      expect(seen).toEqual(full);
    }
    // A filter applies on later pages too; the last page's cursor gives an empty page.
    const first = await api("GET", "/health-scores?riskLevel=LOW&limit=3");
    expect(first.body).toMatchObject({ hasMore: true });
    const second = await api("GET", `/health-scores?riskLevel=LOW&limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body.data).toHaveLength(2);
    expect(second.body.hasMore).toBe(false);
    const empty = await api("GET", `/health-scores?riskLevel=LOW&limit=3&cursor=${second.body.nextCursor}`);
    expect(empty.body).toMatchObject({ data: [], hasMore: false, nextCursor: null });
  });

  it("refuses bad limits, unknown parameters and unknown cursors", async () => {
    for (const query of ["limit=101", "limit=0", "updatedAfter=2026-01-01T00:00:00Z", "colour=red"]) {
      const res = await api("GET", `/health-scores?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.error.code).toBe("validation_error");
    }
    const unknown = await api("GET", "/health-scores?cursor=doesnotexist123");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe("bad_request");
  });

  it("never lists another organisation's accounts nor accepts its cursor", async () => {
    const other = await createTestOrg(["health:read"]);
    const apiOther = client(server.url, other.key);
    expect((await apiOther("GET", "/health-scores")).body).toMatchObject({
      data: [],
      hasMore: false,
      nextCursor: null,
    });
    expect((await apiOther("GET", `/health-scores?cursor=${ids.high}`)).status).toBe(400);
    const mine = await createAccount(other.orgId, "Mine");
    await refreshHealthScores(other.orgId);
    expect(names((await apiOther("GET", "/health-scores")).body.data)).toEqual([undefined]);
    expect((await apiOther("GET", "/health-scores")).body.data[0].accountId).toBe(mine.id);
  });
});
