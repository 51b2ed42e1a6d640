// The churn-risk model as a pure function, checked against values computed by hand (docs/architecture.md, "Health scores").
import { describe, expect, it } from "vitest";
import { buildHistory, computeHealthScore, HEALTH_WEIGHTS, type HealthInputs, riskLevelOf } from "./model";

const NOW = new Date("2026-11-21T12:00:00.000Z");
const daysAgo = (days: number, extraMs = 0) => new Date(NOW.getTime() - days * 86_400_000 - extraMs);

const EMPTY: HealthInputs = {
  devices: { total: 0, offline: 0, endOfLife: 0, notPatchCompliant: 0 },
  lastTouchpointAt: null,
  accountCreatedAt: NOW,
  openRenewals: 0,
  lostDealsLast90Days: 0,
  overdueTasks: 0,
  externalSignalScores: [],
};

const byKey = (result: ReturnType<typeof computeHealthScore>) =>
  Object.fromEntries(result.signals.map((s) => [s.key, { value: s.value, contribution: s.contribution }]));

describe("computeHealthScore", () => {
  it("has weights adding up to 100, listed in a fixed order", () => {
    expect(Object.values(HEALTH_WEIGHTS).reduce((a, b) => a + b, 0)).toBe(100);
    const result = computeHealthScore(EMPTY, NOW);
    expect(result.signals.map((s) => [s.key, s.weight])).toEqual([
      ["devices", 25],
      ["engagement", 25],
      ["pipeline", 20],
      ["service", 15],
      ["external", 15],
    ]);
  });

  it("scores an account with no data 0 (LOW) on creation and 25 (MEDIUM) after 90 silent days", () => {
    const fresh = computeHealthScore(EMPTY, NOW);
    expect(fresh.score).toBe(0);
    expect(fresh.riskLevel).toBe("LOW");
    for (const signal of fresh.signals) expect(signal).toMatchObject({ value: 0, contribution: 0 });
    expect(fresh.signals[0]?.detail).toBe("No devices recorded.");
    expect(fresh.signals[1]?.detail).toBe("No touchpoint logged; 0 days since the account was created.");

    // 50 days: (50 − 10) × 1.25 = 50 → 25 % of 50 = 12.5 → rounds half up to 13.
    const fifty = computeHealthScore({ ...EMPTY, accountCreatedAt: daysAgo(50) }, NOW);
    expect(byKey(fifty).engagement).toEqual({ value: 50, contribution: 12.5 });
    expect(fifty.score).toBe(13);

    const old = computeHealthScore({ ...EMPTY, accountCreatedAt: daysAgo(400) }, NOW);
    expect(byKey(old).engagement).toEqual({ value: 100, contribution: 25 });
    expect(old.score).toBe(25);
    expect(old.riskLevel).toBe("MEDIUM");
  });

  it("combines all five signals as computed by hand", () => {
    const result = computeHealthScore(
      {
        devices: { total: 4, offline: 1, endOfLife: 2, notPatchCompliant: 1 },
        lastTouchpointAt: daysAgo(30, 3_600_000),
        accountCreatedAt: daysAgo(400),
        openRenewals: 1,
        lostDealsLast90Days: 1,
        overdueTasks: 2,
        externalSignalScores: [50, 40],
      },
      NOW,
    );
    expect(byKey(result)).toEqual({
      // 100 × (0.4 × 1/4 + 0.3 × 2/4 + 0.3 × 1/4) = 32.5; 25 % → 8.125 → 8.13
      devices: { value: 32.5, contribution: 8.13 },
      // 30 whole days: (30 − 10) × 1.25 = 25; 25 % → 6.25
      engagement: { value: 25, contribution: 6.25 },
      // 25 × 1 + 50 × 1 = 75; 20 % → 15
      pipeline: { value: 75, contribution: 15 },
      // 20 × 2 = 40; 15 % → 6
      service: { value: 40, contribution: 6 },
      // 100 × (1 − 0.5 × 0.6) = 70; 15 % → 10.5
      external: { value: 70, contribution: 10.5 },
    });
    // 8.13 + 6.25 + 15 + 6 + 10.5 = 45.88 → 46
    expect(result.score).toBe(46);
    expect(result.riskLevel).toBe("MEDIUM");
    expect(result.signals[0]).toMatchObject({
      detail: "1 of 4 devices offline, 2 end-of-life, 1 not patch-compliant.",
      inputs: { total: 4, offline: 1, endOfLife: 2, notPatchCompliant: 1 },
    });
    expect(result.signals[1]).toMatchObject({
      detail: "Last touchpoint 30 days ago.",
      inputs: { daysSinceLastTouchpoint: 30, lastTouchpointAt: daysAgo(30, 3_600_000).toISOString() },
    });
    expect(result.signals[2]?.detail).toBe("1 open renewal deal, 1 deal lost in the last 90 days.");
    expect(result.signals[3]?.detail).toBe("2 overdue tasks.");
    expect(result.signals[4]).toMatchObject({
      detail: "2 active signals (scores 50, 40).",
      inputs: { activeSignals: 2 },
    });
  });

  it("caps every signal at 100 and the score at 100 (CRITICAL)", () => {
    const result = computeHealthScore(
      {
        devices: { total: 3, offline: 3, endOfLife: 3, notPatchCompliant: 3 },
        lastTouchpointAt: daysAgo(365),
        accountCreatedAt: daysAgo(400),
        openRenewals: 3,
        lostDealsLast90Days: 4,
        overdueTasks: 12,
        externalSignalScores: [100, 20],
      },
      NOW,
    );
    for (const signal of result.signals) expect(signal.value).toBe(100);
    expect(result.signals.map((s) => s.contribution)).toEqual([25, 25, 20, 15, 15]);
    expect(result.score).toBe(100);
    expect(result.riskLevel).toBe("CRITICAL");
  });

  it("counts whole days, prefers the last touchpoint to the creation date and ignores a future one", () => {
    // 10 days 23 hours: still within the 10-day grace period.
    const grace = computeHealthScore({ ...EMPTY, lastTouchpointAt: daysAgo(10, 23 * 3_600_000) }, NOW);
    expect(byKey(grace).engagement?.value).toBe(0);
    // 11 days: 1.25
    const eleven = computeHealthScore({ ...EMPTY, accountCreatedAt: daysAgo(300), lastTouchpointAt: daysAgo(11) }, NOW);
    expect(byKey(eleven).engagement).toEqual({ value: 1.25, contribution: 0.31 });
    expect(eleven.score).toBe(0);
    const future = computeHealthScore({ ...EMPTY, lastTouchpointAt: new Date(NOW.getTime() + 86_400_000) }, NOW);
    expect(byKey(future).engagement?.value).toBe(0);
  });

  it("rounds values to cents and the score from the shown contributions", () => {
    // devices 1 of 3 offline: 40/3 = 13.333… → 13.33; 25 % → 3.3325 → 3.33
    // external 33: 33; 15 % → 4.95;  service 1: 20; 15 % → 3.   3.33 + 4.95 + 3 = 11.28 → 11
    const result = computeHealthScore(
      {
        ...EMPTY,
        devices: { total: 3, offline: 1, endOfLife: 0, notPatchCompliant: 0 },
        overdueTasks: 1,
        externalSignalScores: [33],
      },
      NOW,
    );
    expect(byKey(result).devices).toEqual({ value: 13.33, contribution: 3.33 });
    expect(byKey(result).external).toEqual({ value: 33, contribution: 4.95 });
    expect(result.score).toBe(11);
  });
});

describe("riskLevelOf", () => {
  it("bands scores LOW < 25 ≤ MEDIUM < 50 ≤ HIGH < 75 ≤ CRITICAL", () => {
    expect([0, 24, 25, 49, 50, 74, 75, 100].map(riskLevelOf)).toEqual([
      "LOW",
      "LOW",
      "MEDIUM",
      "MEDIUM",
      "HIGH",
      "HIGH",
      "CRITICAL",
      "CRITICAL",
    ]);
  });
});

describe("buildHistory", () => {
  it("gives exactly 90 consecutive days ending today, null before the first score", () => {
    const history = buildHistory([{ day: "2026-11-21", score: 40 }], "2026-11-21");
    expect(history).toHaveLength(90);
    expect(history[0]).toEqual({ date: "2026-08-24", score: null });
    expect(history.at(-1)).toEqual({ date: "2026-11-21", score: 40 });
    expect(history.filter((p) => p.score === null)).toHaveLength(89);
    for (let i = 1; i < history.length; i++) {
      expect(Date.parse(history[i]?.date ?? "") - Date.parse(history[i - 1]?.date ?? "")).toBe(86_400_000);
    }
  });

  it("carries the last known score forward, including one older than the window", () => {
    const history = buildHistory(
      [
        { day: "2026-11-20", score: 70 },
        { day: "2026-05-01", score: 10 },
        { day: "2026-10-01", score: 30 },
      ],
      "2026-11-21",
    );
    expect(history[0]).toEqual({ date: "2026-08-24", score: 10 });
    expect(history.find((p) => p.date === "2026-09-30")?.score).toBe(10);
    expect(history.find((p) => p.date === "2026-10-01")?.score).toBe(30);
    expect(history.find((p) => p.date === "2026-11-19")?.score).toBe(30);
    expect(history.at(-2)).toEqual({ date: "2026-11-20", score: 70 });
    expect(history.at(-1)).toEqual({ date: "2026-11-21", score: 70 });
  });
});
