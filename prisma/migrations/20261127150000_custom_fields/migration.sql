-- CreateEnum
CREATE TYPE "CustomFieldResource" AS ENUM ('account', 'contact', 'deal', 'device', 'task');

-- CreateEnum
CREATE TYPE "CustomFieldType" AS ENUM ('text', 'number', 'boolean', 'date', 'datetime', 'select', 'multiSelect', 'url', 'email', 'currency');

-- AlterTable
ALTER TABLE "Account" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "Contact" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "Deal" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "Device" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "Task" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "CustomField" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "resource" "CustomFieldResource" NOT NULL,
    "key" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "type" "CustomFieldType" NOT NULL,
    "description" TEXT,
    "options" JSONB,
    "required" BOOLEAN NOT NULL DEFAULT false,
    "searchable" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "archivedAt" TIMESTAMP(3),

    CONSTRAINT "CustomField_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CustomFieldVersion" (
    "orgId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,

    CONSTRAINT "CustomFieldVersion_pkey" PRIMARY KEY ("orgId")
);

-- CreateIndex
CREATE UNIQUE INDEX "CustomField_orgId_resource_key_key" ON "CustomField"("orgId", "resource", "key");

-- CreateIndex
CREATE INDEX "Account_customFields_idx" ON "Account" USING GIN ("customFields" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "Contact_customFields_idx" ON "Contact" USING GIN ("customFields" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "Deal_customFields_idx" ON "Deal" USING GIN ("customFields" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "Device_customFields_idx" ON "Device" USING GIN ("customFields" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "Task_customFields_idx" ON "Task" USING GIN ("customFields" jsonb_path_ops);

-- AddForeignKey
ALTER TABLE "CustomField" ADD CONSTRAINT "CustomField_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CustomFieldVersion" ADD CONSTRAINT "CustomFieldVersion_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
