-- Times within the years 0001 to 9999 (docs/api-contract.md §2.2; docs/architecture.md, "Data and migrations"): from
-- now on every date and time a request gives is refused outside them, but earlier writes could store a few: a time
-- whose offset carried it past 9999-12-31 in UTC (9999-12-31T23:59:59-01:00 is 10000-01-01T00:59:59Z), or before
-- 0001-01-01 (0001-01-01T00:00:00+01:00). Such a record answered 500 on every read (a year past 9999 is no ISO 8601
-- timestamp of four digits), and a custom datetime stored as `+010000-…` sorted before every other value. Each is
-- clamped to the nearest end of the range, which keeps its meaning ("never", "always") and its order; `updatedAt`
-- stays and no event is recorded, as for the purge of archived values: the stored value could not be read as it was.

-- The record columns requests write.
UPDATE "Task" SET "dueAt" = LEAST(GREATEST("dueAt", '0001-01-01 00:00:00'), '9999-12-31 23:59:59.999')
  WHERE "dueAt" < '0001-01-01 00:00:00' OR "dueAt" > '9999-12-31 23:59:59.999';
UPDATE "Device" SET "lastSeenAt" = LEAST(GREATEST("lastSeenAt", '0001-01-01 00:00:00'), '9999-12-31 23:59:59.999')
  WHERE "lastSeenAt" < '0001-01-01 00:00:00' OR "lastSeenAt" > '9999-12-31 23:59:59.999';
UPDATE "Touchpoint" SET "occurredAt" = LEAST(GREATEST("occurredAt", '0001-01-01 00:00:00'), '9999-12-31 23:59:59.999')
  WHERE "occurredAt" < '0001-01-01 00:00:00' OR "occurredAt" > '9999-12-31 23:59:59.999';
UPDATE "HealthSignal"
  SET "occurredAt" = LEAST(GREATEST("occurredAt", '0001-01-01 00:00:00'), '9999-12-31 23:59:59.999'),
      "expiresAt" = LEAST(GREATEST("expiresAt", '0001-01-01 00:00:00'), '9999-12-31 23:59:59.999')
  WHERE "occurredAt" < '0001-01-01 00:00:00' OR "occurredAt" > '9999-12-31 23:59:59.999'
     OR "expiresAt" < '0001-01-01 00:00:00' OR "expiresAt" > '9999-12-31 23:59:59.999';

-- Custom date and datetime values: strings in `customFields`, valid when they start with a year of four digits other
-- than 0000. Past the range: a datetime `+010000-…` (or later); before it: `0000-…` or `-000001-…`.
DO $$
DECLARE
  resource TEXT;
BEGIN
  FOREACH resource IN ARRAY ARRAY['account', 'contact', 'deal', 'device', 'task'] LOOP
    EXECUTE format(
      'UPDATE %I AS t SET "customFields" = t."customFields" || c."fixed"
       FROM (
         SELECT r."id", jsonb_object_agg(f."key",
                  CASE WHEN f."type" = ''date'' THEN ''0001-01-01''
                       WHEN (r."customFields" ->> f."key") LIKE ''+%%'' THEN ''9999-12-31T23:59:59.999Z''
                       ELSE ''0001-01-01T00:00:00.000Z'' END) AS "fixed"
         FROM %I AS r
         JOIN "CustomField" AS f ON f."orgId" = r."orgId" AND f."resource" = %L AND f."type" IN (''date'', ''datetime'')
         WHERE jsonb_typeof(r."customFields" -> f."key") = ''string''
           AND ((r."customFields" ->> f."key") !~ ''^[0-9]{4}-'' OR (r."customFields" ->> f."key") LIKE ''0000-%%'')
         GROUP BY r."id"
       ) AS c
       WHERE t."id" = c."id"',
      initcap(resource), initcap(resource), resource);
  END LOOP;
END
$$;
