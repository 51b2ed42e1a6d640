-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "createdById" TEXT;

-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "secondFactor" TEXT;

-- AlterTable
ALTER TABLE "SettingsAuditEntry" ADD COLUMN     "actorApiKeyId" TEXT;

-- AlterTable
ALTER TABLE "TwoFactor" ADD COLUMN     "lastAcceptedStep" INTEGER;

-- CreateIndex
CREATE INDEX "ApiKey_createdById_idx" ON "ApiKey"("createdById");

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_createdById_fkey" FOREIGN KEY ("createdById") REFERENCES "User"("id") ON DELETE SET NULL ON UPDATE CASCADE;
