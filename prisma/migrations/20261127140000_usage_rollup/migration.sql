-- CreateTable
CREATE TABLE "UsageRollup" (
    "id" BIGSERIAL NOT NULL,
    "orgId" TEXT NOT NULL,
    "widthSeconds" INTEGER NOT NULL,
    "start" TIMESTAMP(3) NOT NULL,
    "apiKeyId" TEXT,
    "method" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "errorCode" TEXT,
    "requests" INTEGER NOT NULL,
    "durationMsSum" BIGINT NOT NULL,
    "durationMsMax" INTEGER NOT NULL,
    "latencyHistogram" INTEGER[],

    CONSTRAINT "UsageRollup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsagePendingSlot" (
    "orgId" TEXT NOT NULL,
    "slot" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UsagePendingSlot_pkey" PRIMARY KEY ("orgId","slot")
);

-- CreateIndex
CREATE INDEX "UsageRollup_orgId_widthSeconds_start_idx" ON "UsageRollup"("orgId", "widthSeconds", "start");

-- AddForeignKey
ALTER TABLE "UsageRollup" ADD CONSTRAINT "UsageRollup_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UsagePendingSlot" ADD CONSTRAINT "UsagePendingSlot_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every statement that inserts audit rows marks the 30-minute slots it wrote to, in its own transaction, so a slot's
-- roll-up can never miss a row: a row committed before the roll-up locks the slot's mark is read by it, and a row
-- inserted after waits here for that lock (DO UPDATE locks the conflicting mark even though WHERE false updates
-- nothing), then marks the slot again once the roll-up has removed the mark. Marks are taken in a fixed order, so two
-- batches never deadlock.
CREATE FUNCTION "usage_mark_pending"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "UsagePendingSlot" ("orgId", "slot")
  SELECT DISTINCT "orgId", date_bin(INTERVAL '30 minutes', "createdAt", TIMESTAMP '1970-01-01')
  FROM "usage_new_rows"
  WHERE "orgId" IS NOT NULL
  ORDER BY 1, 2
  ON CONFLICT ("orgId", "slot") DO UPDATE SET "orgId" = EXCLUDED."orgId" WHERE FALSE;
  RETURN NULL;
END
$$;

CREATE TRIGGER "AuditLog_usage_mark_pending" AFTER INSERT ON "AuditLog"
REFERENCING NEW TABLE AS "usage_new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "usage_mark_pending"();

-- The calls logged so far are read from "AuditLog" until the roll-up function has rolled their slots up.
INSERT INTO "UsagePendingSlot" ("orgId", "slot")
SELECT DISTINCT "orgId", date_bin(INTERVAL '30 minutes', "createdAt", TIMESTAMP '1970-01-01')
FROM "AuditLog" WHERE "orgId" IS NOT NULL;
