// What the one-connection guard costs (docs/architecture.md, "Data and migrations"): run with
// `DATABASE_URL=postgresql://… npx tsx bench/connection-guard.ts`. Prints the check's own cost per call outside a
// transaction (every query on the process-wide pool runs it) and the time of a `SELECT 1` through Prisma with the
// check installed and removed, alternating, median of 8 rounds of 4,000. Reads only; a report, not a test.
import { performance } from "node:perf_hooks";
import { closeDb } from "../server/db/client";
import { prisma } from "../server/db/transaction";

const holder = globalThis as unknown as { __crmConnectionCheck?: () => string | null };
const check = holder.__crmConnectionCheck;
if (!check) throw new Error("server/db/transaction.ts installed no connection check");

const CHECKS = 2_000_000;
const start = performance.now();
for (let i = 0; i < CHECKS; i++) check();
console.log(`the check: ${(((performance.now() - start) * 1e6) / CHECKS).toFixed(1)} ns per query`);

async function microsPerQuery(n: number): Promise<number> {
  const began = performance.now();
  for (let i = 0; i < n; i++) await prisma().$queryRaw`SELECT 1`;
  return ((performance.now() - began) * 1000) / n;
}

await microsPerQuery(2_000);
const runs = { on: [] as number[], off: [] as number[] };
for (let round = 0; round < 8; round++) {
  for (const mode of round % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) {
    holder.__crmConnectionCheck = mode === "on" ? check : undefined;
    runs[mode].push(await microsPerQuery(4_000));
  }
}
holder.__crmConnectionCheck = check;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
console.log(
  `SELECT 1 through Prisma: ${median(runs.on).toFixed(1)} µs with the check, ${median(runs.off).toFixed(1)} µs without`,
);
await closeDb();
