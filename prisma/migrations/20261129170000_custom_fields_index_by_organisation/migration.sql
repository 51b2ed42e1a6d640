-- Custom field equality (`customFields.<key>=…`, structured search's eq and in) looks up one organisation's records
-- alone (docs/architecture.md, "Custom fields"). The GIN indexes over "customFields" held every organisation's
-- values under one key: a value common in another organisation's records ({"tier": "gold"} in 25,000 of them) made
-- every organisation's lookup of it read those entries and drop them by "orgId". Indexed as {"<orgId>": customFields}
-- instead, jsonb_path_ops hashes the organisation into each key, so a lookup reads its own organisation's entries only.
-- jsonb_build_object is STABLE for its "any" arguments; for a text and a jsonb it depends on no setting, so the
-- wrapper is declared IMMUTABLE, which an index expression needs.
CREATE FUNCTION "custom_fields_of"(org TEXT, fields JSONB) RETURNS JSONB
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
SELECT jsonb_build_object(org, fields)
$$;

DROP INDEX "Account_customFields_idx";
CREATE INDEX "Account_customFields_idx" ON "Account" USING GIN ("custom_fields_of"("orgId", "customFields") jsonb_path_ops);
DROP INDEX "Contact_customFields_idx";
CREATE INDEX "Contact_customFields_idx" ON "Contact" USING GIN ("custom_fields_of"("orgId", "customFields") jsonb_path_ops);
DROP INDEX "Deal_customFields_idx";
CREATE INDEX "Deal_customFields_idx" ON "Deal" USING GIN ("custom_fields_of"("orgId", "customFields") jsonb_path_ops);
DROP INDEX "Device_customFields_idx";
CREATE INDEX "Device_customFields_idx" ON "Device" USING GIN ("custom_fields_of"("orgId", "customFields") jsonb_path_ops);
DROP INDEX "Task_customFields_idx";
CREATE INDEX "Task_customFields_idx" ON "Task" USING GIN ("custom_fields_of"("orgId", "customFields") jsonb_path_ops);
