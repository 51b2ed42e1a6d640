-- CreateIndex
CREATE INDEX "Contact_orgId_lastName_id_idx" ON "Contact"("orgId", "lastName", "id");
