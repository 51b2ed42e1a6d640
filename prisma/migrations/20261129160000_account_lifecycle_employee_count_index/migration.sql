-- Structured search finds each filter group through an index (docs/architecture.md, "Search"): a group such as
-- lifecycleStatus = AT_RISK AND employeeCount BETWEEN 400 AND 600 reads only its matches through this index, where
-- ("orgId", "lifecycleStatus") read every account of the status. The new index leads with the same columns, so it
-- serves what the one it replaces served.
CREATE INDEX "Account_orgId_lifecycleStatus_employeeCount_id_idx" ON "Account"("orgId", "lifecycleStatus", "employeeCount", "id");

DROP INDEX "Account_orgId_lifecycleStatus_idx";
