// One connection per request (docs/architecture.md, "Data and migrations"), against the real PostgreSQL: inside a
// transaction every query goes through it; a query that would take a second pooled connection while the transaction
// holds one (the process-wide client, or outsideTransaction() awaited inside it) fails at once with
// SecondConnectionError, as it would otherwise wait for itself on the embedded database's one connection. Work the
// transaction started and did not wait for runs once it has ended. The transaction scope is one per process, so a
// second copy of the module (Next.js bundles its own) joins the first copy's transaction.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it, vi } from "vitest";
import { closeDb, db, SecondConnectionError } from "../../../server/db/client";
import { outsideTransaction, prisma, transaction } from "../../../server/db/transaction";
import { ensureOrganisation } from "../../../server/platform/organisations";

afterAll(() => closeDb());

describe("a query needing a second connection while a transaction holds one", () => {
  it("fails at once on the process-wide client and in outsideTransaction() awaited inside the transaction", async () => {
    const org = await ensureOrganisation(`one-conn-${randomBytes(4).toString("hex")}`);
    await expect(
      transaction(async () => {
        await prisma().organisation.update({ where: { id: org.id }, data: { name: "inside" } });
        await db().prisma.organisation.count();
      }),
    ).rejects.toBeInstanceOf(SecondConnectionError);
    await expect(
      transaction(async () => {
        await outsideTransaction(() => prisma().organisation.count());
      }),
    ).rejects.toThrow(/needed a second database connection while its transaction holds one/);
    await expect(
      transaction(async () => {
        // A transaction of its own, started from inside another, is a second connection too.
        await outsideTransaction(() => transaction(() => prisma().organisation.count()));
      }),
    ).rejects.toBeInstanceOf(SecondConnectionError);
    // Each rolled back: the name is as it was.
    expect((await prisma().organisation.findUniqueOrThrow({ where: { id: org.id } })).name).not.toBe("inside");
  });

  it("inside the transaction prisma() is its connection; what it leaves running queries once it has ended", async () => {
    const org = await ensureOrganisation(`one-conn-${randomBytes(4).toString("hex")}`);
    let later: Promise<number> | undefined;
    await transaction(async () => {
      await prisma().organisation.update({ where: { id: org.id }, data: { name: "renamed" } });
      // Reads its own uncommitted write.
      expect((await prisma().organisation.findUniqueOrThrow({ where: { id: org.id } })).name).toBe("renamed");
      later = new Promise<number>((resolve, reject) => {
        setTimeout(() => outsideTransaction(() => prisma().organisation.count()).then(resolve, reject), 50);
      });
    });
    expect(await later).toBeGreaterThan(0);
    // Outside any transaction the process-wide client is free to use.
    expect(await db().prisma.organisation.count({ where: { id: org.id } })).toBe(1);
  });

  it("a second copy of the module joins the first copy's transaction instead of opening a connection", async () => {
    const org = await ensureOrganisation(`one-conn-${randomBytes(4).toString("hex")}`);
    vi.resetModules();
    const copy = await import("../../../server/db/transaction");
    expect(copy.prisma).not.toBe(prisma);
    await expect(
      transaction(async (tx) => {
        expect(copy.prisma()).toBe(tx);
        await copy.prisma().organisation.update({ where: { id: org.id }, data: { name: "by the copy" } });
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect((await prisma().organisation.findUniqueOrThrow({ where: { id: org.id } })).name).not.toBe("by the copy");
  });
});
