-- AlterTable
ALTER TABLE "Event" ADD COLUMN     "actor" JSONB,
ADD COLUMN     "changedFields" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "previous" JSONB,
ADD COLUMN     "resource" TEXT,
ADD COLUMN     "resourceId" TEXT,
ADD COLUMN     "seq" BIGSERIAL NOT NULL,
ADD COLUMN     "txid" BIGINT NOT NULL DEFAULT ((pg_current_xact_id())::text)::bigint;

-- CreateIndex
CREATE INDEX "Event_orgId_txid_seq_idx" ON "Event"("orgId", "txid", "seq");

-- Events written before the feed existed: their resource and record id, from the name and the payload.
UPDATE "Event" SET "resource" = split_part("name", '.', 1), "resourceId" = "data"->>'id' WHERE "name" <> 'webhook.test';
