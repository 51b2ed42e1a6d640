-- The events feed in commit order per organisation: every event gets "sequence", its position in its organisation's
-- feed, stamped just before its transaction commits under the row lock of the organisation's "EventCounter".

-- Events recorded so far are numbered in the order the feed served them: by writing transaction, then insertion.
ALTER TABLE "Event" ADD COLUMN "sequence" BIGINT;
UPDATE "Event" AS e SET "sequence" = n."sequence"
FROM (SELECT "id", row_number() OVER (PARTITION BY "orgId" ORDER BY "txid", "seq") AS "sequence" FROM "Event") AS n
WHERE e."id" = n."id";
ALTER TABLE "Event" ALTER COLUMN "sequence" SET NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "Event_orgId_sequence_key" ON "Event"("orgId", "sequence");

-- CreateTable
CREATE TABLE "EventCounter" (
    "orgId" TEXT NOT NULL,
    "lastSequence" BIGINT NOT NULL,

    CONSTRAINT "EventCounter_pkey" PRIMARY KEY ("orgId")
);

-- Each organisation continues after its last number.
INSERT INTO "EventCounter" ("orgId", "lastSequence") SELECT "orgId", max("sequence") FROM "Event" GROUP BY "orgId";

-- AddForeignKey
ALTER TABLE "EventCounter" ADD CONSTRAINT "EventCounter_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Cursors of the first format (v1.<txid>.<seq>.<at>) are translated through "seq", kept as "legacySeq" for the events
-- recorded so far and null for new ones; "txid" and its index are no longer read.
DROP INDEX "Event_orgId_txid_seq_idx";
ALTER TABLE "Event" RENAME COLUMN "seq" TO "legacySeq";
ALTER TABLE "Event" ALTER COLUMN "legacySeq" DROP DEFAULT, ALTER COLUMN "legacySeq" DROP NOT NULL;
DROP SEQUENCE "Event_seq_seq";
ALTER TABLE "Event" DROP COLUMN "txid";
