-- CreateEnum
CREATE TYPE "WebhookReplayStatus" AS ENUM ('RUNNING', 'COMPLETED', 'CANCELLED', 'STOPPED');

-- CreateEnum
CREATE TYPE "WebhookAlertKind" AS ENUM ('ENDPOINT_DISABLED', 'WORKER_BACKLOG');

-- CreateEnum
CREATE TYPE "AttemptTrigger" AS ENUM ('SCHEDULED', 'MANUAL', 'TEST', 'REPLAY');

-- AlterTable
ALTER TABLE "DeliveryAttempt" ADD COLUMN     "replayId" TEXT,
ADD COLUMN     "trigger" "AttemptTrigger" NOT NULL DEFAULT 'SCHEDULED';

-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "changedFields" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateTable
CREATE TABLE "WebhookFilteredCount" (
    "endpointId" TEXT NOT NULL,
    "bucket" TIMESTAMP(3) NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "WebhookFilteredCount_pkey" PRIMARY KEY ("endpointId","bucket")
);

-- CreateTable
CREATE TABLE "WebhookReplay" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "endpointId" TEXT NOT NULL,
    "status" "WebhookReplayStatus" NOT NULL DEFAULT 'RUNNING',
    "runningFor" TEXT,
    "since" TIMESTAMP(3) NOT NULL,
    "until" TIMESTAMP(3) NOT NULL,
    "statuses" TEXT[],
    "events" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "matched" INTEGER NOT NULL,
    "sent" INTEGER NOT NULL DEFAULT 0,
    "succeeded" INTEGER NOT NULL DEFAULT 0,
    "reason" TEXT,
    "actor" JSONB NOT NULL,
    "leaseUntil" TIMESTAMP(3),
    "lastSentAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "WebhookReplay_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookReplayItem" (
    "replayId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "eventId" TEXT NOT NULL,
    "deliveryId" TEXT,
    "sentAt" TIMESTAMP(3),
    "success" BOOLEAN,

    CONSTRAINT "WebhookReplayItem_pkey" PRIMARY KEY ("replayId","position")
);

-- CreateTable
CREATE TABLE "WebhookAlert" (
    "id" BIGSERIAL NOT NULL,
    "orgId" TEXT NOT NULL,
    "kind" "WebhookAlertKind" NOT NULL,
    "endpointId" TEXT,
    "message" TEXT NOT NULL,
    "openKey" TEXT,
    "openedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolvedAt" TIMESTAMP(3),
    "mailedAt" TIMESTAMP(3),
    "mailResult" TEXT,

    CONSTRAINT "WebhookAlert_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WebhookFilteredCount_bucket_idx" ON "WebhookFilteredCount"("bucket");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookReplay_runningFor_key" ON "WebhookReplay"("runningFor");

-- CreateIndex
CREATE INDEX "WebhookReplay_orgId_endpointId_createdAt_idx" ON "WebhookReplay"("orgId", "endpointId", "createdAt");

-- CreateIndex
CREATE INDEX "WebhookReplay_status_updatedAt_idx" ON "WebhookReplay"("status", "updatedAt");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookAlert_openKey_key" ON "WebhookAlert"("openKey");

-- CreateIndex
CREATE INDEX "WebhookAlert_orgId_resolvedAt_idx" ON "WebhookAlert"("orgId", "resolvedAt");

-- CreateIndex
CREATE INDEX "DeliveryAttempt_replayId_idx" ON "DeliveryAttempt"("replayId");

-- AddForeignKey
ALTER TABLE "WebhookFilteredCount" ADD CONSTRAINT "WebhookFilteredCount_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookReplay" ADD CONSTRAINT "WebhookReplay_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookReplayItem" ADD CONSTRAINT "WebhookReplayItem_replayId_fkey" FOREIGN KEY ("replayId") REFERENCES "WebhookReplay"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookAlert" ADD CONSTRAINT "WebhookAlert_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookAlert" ADD CONSTRAINT "WebhookAlert_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DeliveryAttempt" ADD CONSTRAINT "DeliveryAttempt_replayId_fkey" FOREIGN KEY ("replayId") REFERENCES "WebhookReplay"("id") ON DELETE SET NULL ON UPDATE CASCADE;
