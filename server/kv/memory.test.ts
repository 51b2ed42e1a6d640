import { afterEach, expect, it } from "vitest";
import { memoryStore } from "./memory";
import type { KeyValueStore } from "./store";

const WINDOW = 60_000;
let clock = 1_700_000_000_000;
let store: KeyValueStore;

function fresh(): KeyValueStore {
  clock = 1_700_000_000_000;
  store = memoryStore({ now: () => clock });
  return store;
}

afterEach(() => store?.close());

it("admits exactly the limit of a burst and counts a refused request nowhere", async () => {
  const kv = fresh();
  const windows = [
    { key: "k", limit: 30 },
    { key: "o", limit: 60 },
  ];
  const results = await Promise.all(Array.from({ length: 40 }, () => kv.slidingWindow(windows, WINDOW)));
  expect(results.filter((result) => result.allowed)).toHaveLength(30);
  expect(results.map((result) => result.windows[0]?.count).slice(0, 30)).toEqual(
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  // The ten refusals left the organisation window at 30, not 40.
  expect(results.at(-1)?.windows).toEqual([
    { limit: 30, count: 30, freeAtMs: clock + WINDOW },
    { limit: 60, count: 30, freeAtMs: clock + WINDOW },
  ]);
});

it("checks both windows together: a full organisation window refuses a key with room", async () => {
  const kv = fresh();
  const a = [
    { key: "a", limit: 5 },
    { key: "org", limit: 6 },
  ];
  const b = [
    { key: "b", limit: 5 },
    { key: "org", limit: 6 },
  ];
  for (let i = 0; i < 5; i++) expect((await kv.slidingWindow(a, WINDOW)).allowed).toBe(true);
  expect((await kv.slidingWindow(a, WINDOW)).allowed).toBe(false);
  expect((await kv.slidingWindow(b, WINDOW)).allowed).toBe(true);
  const refused = await kv.slidingWindow(b, WINDOW);
  expect(refused.allowed).toBe(false);
  expect(refused.windows.map((window) => window.count)).toEqual([1, 6]);
});

it("slides: each request ages out one window after it was counted, not at a fixed boundary", async () => {
  const kv = fresh();
  const windows = [{ key: "s", limit: 2 }];
  const start = clock;
  expect((await kv.slidingWindow(windows, WINDOW)).allowed).toBe(true);
  clock += 20_000;
  expect((await kv.slidingWindow(windows, WINDOW)).allowed).toBe(true);
  clock += 10_000;
  const refused = await kv.slidingWindow(windows, WINDOW);
  expect(refused).toMatchObject({ allowed: false, nowMs: start + 30_000 });
  // The first request frees its slot at start + 60 s.
  expect(refused.windows[0]?.freeAtMs).toBe(start + WINDOW);
  clock = start + WINDOW - 1;
  expect((await kv.slidingWindow(windows, WINDOW)).allowed).toBe(false);
  clock = start + WINDOW;
  const admitted = await kv.slidingWindow(windows, WINDOW);
  expect(admitted.allowed).toBe(true);
  // Full again; the next slot frees when the second request (start + 20 s) ages out.
  expect(admitted.windows[0]).toEqual({ limit: 2, count: 2, freeAtMs: start + 20_000 + WINDOW });
  expect((await kv.slidingWindow(windows, WINDOW)).allowed).toBe(false);
  clock = start + 20_000 + WINDOW;
  expect((await kv.slidingWindow(windows, WINDOW)).allowed).toBe(true);
});

it("reports when a slot frees even after the limit was lowered below the count", async () => {
  const kv = fresh();
  const start = clock;
  for (let i = 0; i < 4; i++) {
    await kv.slidingWindow([{ key: "l", limit: 10 }], WINDOW);
    clock += 1_000;
  }
  const refused = await kv.slidingWindow([{ key: "l", limit: 2 }], WINDOW);
  // Entries at start+0,1,2,3 s: the count drops below 2 once the third (start + 2 s) ages out.
  expect(refused).toMatchObject({
    allowed: false,
    windows: [{ limit: 2, count: 4, freeAtMs: start + 2_000 + WINDOW }],
  });
});

it("an empty window frees at once and a clock stepping back does not reorder the log", async () => {
  const kv = fresh();
  const refused = await kv.slidingWindow(
    [
      { key: "empty", limit: 5 },
      { key: "none", limit: 0 },
    ],
    WINDOW,
  );
  expect(refused).toMatchObject({ allowed: false, windows: [{ count: 0, freeAtMs: clock }, { count: 0 }] });
  const start = clock;
  await kv.slidingWindow([{ key: "back", limit: 5 }], WINDOW);
  clock -= 5_000;
  const second = await kv.slidingWindow([{ key: "back", limit: 5 }], WINDOW);
  expect(second.nowMs).toBe(start);
  expect(second.windows[0]).toEqual({ limit: 5, count: 2, freeAtMs: start + WINDOW });
});

it("always answers ping and reports the memory driver", async () => {
  const kv = fresh();
  expect(kv.driver).toBe("memory");
  await expect(kv.ping()).resolves.toBeUndefined();
});

it("gives at most the limit of leases at once; a lease given back or lapsed frees its slot", async () => {
  const kv = fresh();
  expect(await kv.acquireLease("run", 2, 1_000, "a")).toEqual({ acquired: true, held: 1 });
  expect(await kv.acquireLease("run", 2, 1_000, "b")).toEqual({ acquired: true, held: 2 });
  expect(await kv.acquireLease("run", 2, 1_000, "c")).toEqual({ acquired: false, held: 2 });
  await kv.releaseLease("run", "a");
  expect(await kv.acquireLease("run", 2, 1_000, "c")).toEqual({ acquired: true, held: 2 });
  // b was never given back: it lapses after its 1 s.
  clock += 1_000;
  expect(await kv.acquireLease("run", 2, 1_000, "d")).toEqual({ acquired: true, held: 1 });
});

it("draws from a budget that starts full, refills at its rate up to its capacity, and can be overdrawn", async () => {
  const kv = fresh();
  expect(await kv.drawBudget("db", 0, 0.25, 3_750)).toEqual({ level: 3_750, nowMs: clock });
  expect((await kv.drawBudget("db", 5_000, 0.25, 3_750)).level).toBe(-1_250);
  clock += 4_000;
  expect((await kv.drawBudget("db", 0, 0.25, 3_750)).level).toBe(-250);
  clock += 60_000;
  expect((await kv.drawBudget("db", 100, 0.25, 3_750)).level).toBe(3_650);
});
