-- The events feed in commit order per organisation: every event gets "sequence", its position in its organisation's
-- feed. A write hands its events to "event_record"; they are inserted, numbered, while its transaction commits, under
-- the row lock of the organisation's "EventCounter", held only until that commit ends.

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

-- CreateTable
CREATE TABLE "EventCommit" (
    "txid" BIGINT NOT NULL,

    CONSTRAINT "EventCommit_pkey" PRIMARY KEY ("txid")
);

-- Cursors of the first format (v1.<txid>.<seq>.<at>) are translated through "seq", kept as "legacySeq" for the events
-- recorded so far and null for new ones; "txid" and its index are no longer read.
DROP INDEX "Event_orgId_txid_seq_idx";
ALTER TABLE "Event" RENAME COLUMN "seq" TO "legacySeq";
ALTER TABLE "Event" ALTER COLUMN "legacySeq" DROP DEFAULT, ALTER COLUMN "legacySeq" DROP NOT NULL;
DROP SEQUENCE "Event_seq_seq";
ALTER TABLE "Event" DROP COLUMN "txid";

-- Records events of one organisation for the current transaction: appends them (the text of a JSON array of event
-- objects) to a transaction-local setting, unparsed, and marks the transaction in "EventCommit", whose deferred
-- trigger inserts them while the transaction commits. A rolled-back savepoint undoes both.
CREATE FUNCTION "event_record"(org TEXT, events TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  pending TEXT := coalesce(current_setting('crm.pending_events', true), '');
BEGIN
  -- '[{"orgId": …, "events": [...]},{…}': the closing bracket is added when it is read.
  PERFORM set_config(
    'crm.pending_events',
    CASE WHEN pending = '' THEN '[' ELSE pending || ',' END || '{"orgId":' || to_jsonb(org)::text || ',"events":' || events
      || '}',
    true
  );
  INSERT INTO "EventCommit" ("txid") VALUES (pg_current_xact_id()::text::bigint) ON CONFLICT DO NOTHING;
END
$$;

-- Runs while a transaction that recorded events commits: for each organisation (in id order, so two transactions never
-- wait for each other's counters in opposite orders) adds the number of its events to the organisation's counter and
-- inserts them, in the order they were recorded, numbered last - n + 1 ... last. The counter row stays locked from
-- here to the end of the commit, so a number is visible only after every smaller one of the organisation.
CREATE FUNCTION "event_commit"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
  pending TEXT := coalesce(current_setting('crm.pending_events', true), '');
  batches JSONB;
  org TEXT;
  n BIGINT;
  last BIGINT;
BEGIN
  DELETE FROM "EventCommit" WHERE "txid" = NEW."txid";
  IF pending = '' THEN
    RETURN NULL;
  END IF;
  batches := (pending || ']')::jsonb;
  PERFORM set_config('crm.pending_events', '', true);
  FOR org, n IN
    SELECT b->>'orgId', sum(jsonb_array_length(b->'events')) FROM jsonb_array_elements(batches) AS b GROUP BY 1 ORDER BY 1
  LOOP
    INSERT INTO "EventCounter" ("orgId", "lastSequence") VALUES (org, n)
    ON CONFLICT ("orgId") DO UPDATE SET "lastSequence" = "EventCounter"."lastSequence" + EXCLUDED."lastSequence"
    RETURNING "lastSequence" INTO last;
    INSERT INTO "Event" ("id", "orgId", "sequence", "name", "resource", "resourceId", "data", "actor", "changedFields",
                         "previous", "isTest", "createdAt", "fannedOutAt")
    SELECT e."id", org, last - n + row_number() OVER (ORDER BY b.ord, e.ord), e."name", e."resource", e."resourceId",
           e."data", e."actor", coalesce(e."changedFields", ARRAY[]::TEXT[]), e."previous", coalesce(e."isTest", false),
           e."createdAt" AT TIME ZONE 'UTC', CASE WHEN e."handled" THEN e."createdAt" AT TIME ZONE 'UTC' END
    FROM jsonb_array_elements(batches) WITH ORDINALITY AS b(batch, ord),
         ROWS FROM (jsonb_to_recordset(b.batch->'events') AS ("id" TEXT, "name" TEXT, "resource" TEXT,
           "resourceId" TEXT, "data" JSONB, "actor" JSONB, "changedFields" TEXT[], "previous" JSONB, "isTest" BOOLEAN,
           "handled" BOOLEAN, "createdAt" TIMESTAMPTZ)) WITH ORDINALITY
           AS e("id", "name", "resource", "resourceId", "data", "actor", "changedFields", "previous", "isTest",
                "handled", "createdAt", ord)
    WHERE b.batch->>'orgId' = org;
  END LOOP;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER "EventCommit_insert" AFTER INSERT ON "EventCommit"
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
EXECUTE FUNCTION "event_commit"();
