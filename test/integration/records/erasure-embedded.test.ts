// Erasure on the embedded default (docs/api-contract.md §4.16): no DATABASE_URL and no REDIS_URL → PGlite under
// DATA_DIR with the in-memory store, as `npm start` runs out of the box. A contact with 1,000 historical states is
// erased within 10 s in the request, and none of its states' values is left. Runs in its own process (vitest forks +
// isolate), so the process-wide database is this file's.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeDb, db } from "../../../server/db/client";
import { migrateProcessDatabase } from "../../../server/db/ready";
import { flushAudit } from "../../../server/platform/request-log/record";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { storedCopies, writeHistory } from "../../helpers/erasure";

const dataDir = mkdtempSync(path.join(tmpdir(), "crm-erasure-embedded-"));
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
process.env.DATA_DIR = dataDir;

let server: TestServer;
beforeAll(async () => {
  await migrateProcessDatabase({ own: true });
  server = await startApi();
}, 180_000);
afterAll(async () => {
  await server?.close();
  await flushAudit();
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

it("erases a contact with 1,000 historical states within 10 s on PGlite, every state's values gone", async () => {
  expect(db().kind).toBe("pglite");
  const api = client(server.url, (await createTestOrg()).key);
  const created = await api("POST", "/contacts", { email: "start.embedded@harbor.example" });
  expect(created.status).toBe(201);
  const states = await writeHistory(api, created.body.data.id, "embedded", 1_000);
  await flushAudit();

  const started = performance.now();
  const res = await api("POST", `/contacts/${created.body.data.id}/erase`);
  const seconds = (performance.now() - started) / 1000;
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(seconds).toBeLessThan(10);
  expect(res.body.data.redacted).toMatchObject({ events: 1_001, auditLogs: 100, idempotencyRecords: 1_000 });
  const sample = states.filter((_, index) => index % 97 === 0 || index === states.length - 1);
  expect(
    await storedCopies(sample.flatMap((state) => [state.email, state.phone, `${state.firstName} ${state.lastName}`])),
  ).toEqual([]);
}, 600_000);
