// Re-indexing the search entries of a custom field's values in the background (docs/architecture.md, "Search"): when
// a field starts or stops counting for quick search (searchable set or cleared, archived), the trigger on
// "CustomField" marks it in "SearchReindex" in the change's transaction (migration
// 20261129120100_search_reindex_background); this module recomputes the entries of the organisation's records holding
// a value of it, one window of records per transaction, off the request: in the `search-reindex` Inngest function, or
// in this process after the commit when no worker is configured.
import { Prisma } from "../../db/generated/client";
import { withStatementClass } from "../../db/statement-budget";
import { prisma, transaction } from "../../db/transaction";
import { warnThrottled } from "../../kv/warn";
import { workerMode } from "../../webhooks/worker";
import type { CustomFieldResource } from "../custom-fields/schema";

/** Records one step reads, in `(createdAt, id)` order over the organisation's index: a statement of tens of ms. */
export const REINDEX_WINDOW = 5_000;

/** The tables and entry functions of the resources quick search finds (tasks have no search entries). */
const INDEXED: Partial<Record<CustomFieldResource, { table: Prisma.Sql; entry: Prisma.Sql }>> = {
  account: { table: Prisma.raw(`"Account"`), entry: Prisma.raw(`"search_entry_account"`) },
  contact: { table: Prisma.raw(`"Contact"`), entry: Prisma.raw(`"search_entry_contact"`) },
  deal: { table: Prisma.raw(`"Deal"`), entry: Prisma.raw(`"search_entry_deal"`) },
  device: { table: Prisma.raw(`"Device"`), entry: Prisma.raw(`"search_entry_device"`) },
};

/** What one step did: `idle` when no field waited, else the records of the window whose entry was written. */
export interface ReindexStep {
  idle: boolean;
  records: number;
}

interface Mark {
  orgId: string;
  resource: CustomFieldResource;
  key: string;
  afterCreatedAt: Date | null;
  afterId: string | null;
}

/**
 * One step of the re-index (docs/architecture.md, "Search"), in one transaction: takes the oldest waiting field
 * (`FOR UPDATE SKIP LOCKED`, so concurrent runs share the work), recomputes the entries of the records holding a value
 * of it among the next `window` records (default {@link REINDEX_WINDOW}) of its organisation and resource, in
 * `(createdAt, id)` order over the organisation's index, and moves the field's place on,
 * or removes its mark after the last window. A change of the field meanwhile waits for this commit and marks it
 * again from the first record.
 * @returns `{ idle: true }` when no field waits; else how many entries were written.
 */
export function reindexSearchStep(window = REINDEX_WINDOW): Promise<ReindexStep> {
  return transaction(async () => {
    const [mark] = await prisma().$queryRaw<Mark[]>`
      SELECT "orgId", "resource", "key", "afterCreatedAt", "afterId" FROM "SearchReindex"
      ORDER BY "requestedAt" LIMIT 1 FOR UPDATE SKIP LOCKED`;
    if (!mark) return { idle: true, records: 0 };
    const where = Prisma.sql`"orgId" = ${mark.orgId} AND "key" = ${mark.key} AND "resource" = ${mark.resource}::"CustomFieldResource"`;
    const indexed = INDEXED[mark.resource];
    if (!indexed) {
      await prisma().$executeRaw`DELETE FROM "SearchReindex" WHERE ${where}`;
      return { idle: false, records: 0 };
    }
    const after = mark.afterCreatedAt
      ? Prisma.sql`AND (n."createdAt", n."id") > (${mark.afterCreatedAt}::timestamp, ${mark.afterId})`
      : Prisma.empty;
    const [last] = await prisma().$queryRaw<Array<{ createdAt: Date; id: string }>>`
      SELECT n."createdAt", n."id" FROM ${indexed.table} AS n WHERE n."orgId" = ${mark.orgId} ${after}
      ORDER BY n."createdAt", n."id" OFFSET ${window - 1} LIMIT 1`;
    const upTo = last
      ? Prisma.sql`AND (n."createdAt", n."id") <= (${last.createdAt}::timestamp, ${last.id})`
      : Prisma.empty;
    const records = await prisma().$executeRaw`
      INSERT INTO "SearchEntry" SELECT e.* FROM ${indexed.table} AS n CROSS JOIN LATERAL ${indexed.entry}(n) AS e
      WHERE n."orgId" = ${mark.orgId} ${after} ${upTo} AND n."customFields" ? ${mark.key}
      ON CONFLICT ("type", "id") DO UPDATE SET "document" = excluded."document"
        WHERE "SearchEntry"."document" IS DISTINCT FROM excluded."document"`;
    if (last) {
      await prisma().$executeRaw`
        UPDATE "SearchReindex" SET "afterCreatedAt" = ${last.createdAt}::timestamp, "afterId" = ${last.id} WHERE ${where}`;
    } else {
      await prisma().$executeRaw`DELETE FROM "SearchReindex" WHERE ${where}`;
    }
    return { idle: false, records };
  });
}

/**
 * Runs {@link reindexSearchStep} until no field waits or `maxSteps` steps have run.
 * @returns the steps run and the entries written.
 */
export async function reindexSearch(maxSteps = 1_000): Promise<{ steps: number; records: number }> {
  let records = 0;
  for (let steps = 0; steps < maxSteps; steps++) {
    const step = await reindexSearchStep();
    if (step.idle) return { steps, records };
    records += step.records;
  }
  return { steps: maxSteps, records };
}

// The run of this process, when no worker is configured, and whether a request came in while it ran.
let running: Promise<void> | null = null;
let again = false;

/**
 * Starts the re-index of the fields marked by a committed change (docs/architecture.md, "Search"), without waiting:
 * with a worker, sends `crm/search.reindex.requested` to Inngest (a failed send is logged at most once a minute;
 * the function also runs every minute, so nothing waits longer); without one, runs it in this process after the
 * response, one step after the other. Never throws.
 */
export function requestSearchReindex(orgId?: string): void {
  if (workerMode() !== "none") {
    void import("../../../inngest/client")
      .then(({ inngest, searchReindexRequested }) =>
        inngest.send(searchReindexRequested.create(orgId === undefined ? {} : { orgId })),
      )
      .catch((error: unknown) =>
        warnThrottled("search.reindex", {
          message: "search re-index not handed to Inngest; its next scheduled run takes it",
          error: String(error),
        }),
      );
    return;
  }
  again = true;
  if (running) return;
  running = (async () => {
    while (again) {
      again = false;
      // Background work, though a request started it: a background statement timeout, not charged to the request.
      await withStatementClass("background", () => reindexSearch()).catch((error: unknown) =>
        warnThrottled("search.reindex", {
          message: "search re-index failed; the next change retries",
          error: String(error),
        }),
      );
    }
  })().finally(() => {
    running = null;
  });
}

/** Resolves when this process's re-index has finished (for shutdown and tests). */
export async function searchReindexSettled(): Promise<void> {
  while (running) await running;
}
