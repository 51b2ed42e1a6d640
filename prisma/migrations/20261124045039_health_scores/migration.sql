-- CreateEnum
CREATE TYPE "RiskLevel" AS ENUM ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL');

-- CreateTable
CREATE TABLE "HealthScore" (
    "accountId" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "score" INTEGER NOT NULL,
    "riskLevel" "RiskLevel" NOT NULL,
    "signals" JSONB NOT NULL,
    "computedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "HealthScore_pkey" PRIMARY KEY ("accountId")
);

-- CreateIndex
CREATE INDEX "HealthScore_orgId_score_accountId_idx" ON "HealthScore"("orgId", "score", "accountId");

-- CreateIndex
CREATE INDEX "HealthScore_orgId_riskLevel_score_accountId_idx" ON "HealthScore"("orgId", "riskLevel", "score", "accountId");

-- CreateIndex
CREATE INDEX "HealthScore_computedAt_idx" ON "HealthScore"("computedAt");

-- AddForeignKey
ALTER TABLE "HealthScore" ADD CONSTRAINT "HealthScore_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "HealthScore" ADD CONSTRAINT "HealthScore_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
