-- External keys are stored in Unicode NFC: the API now normalises "externalId" and "rmmAgentId" wherever they enter,
-- so keys stored before in another form are normalised here, or a later request could no longer match them. A key whose
-- NFC form another record of its organisation already holds (the two were distinct keys before) is left as it was; of
-- several that share one NFC form, the first by id is normalised. No event is recorded: the text is the same to every
-- reader that compares Unicode text canonically.
UPDATE "Account" AS a SET "externalId" = n."nfc"
FROM (
  SELECT DISTINCT ON ("orgId", normalize("externalId", NFC)) "id", "orgId", normalize("externalId", NFC) AS "nfc"
  FROM "Account"
  WHERE "externalId" IS NOT NULL AND "externalId" IS NOT NFC NORMALIZED
  ORDER BY "orgId", normalize("externalId", NFC), "id"
) AS n
WHERE a."id" = n."id"
  AND NOT EXISTS (SELECT 1 FROM "Account" AS b WHERE b."orgId" = n."orgId" AND b."externalId" = n."nfc");

UPDATE "Device" AS d SET "rmmAgentId" = n."nfc"
FROM (
  SELECT DISTINCT ON ("orgId", normalize("rmmAgentId", NFC)) "id", "orgId", normalize("rmmAgentId", NFC) AS "nfc"
  FROM "Device"
  WHERE "rmmAgentId" IS NOT NFC NORMALIZED
  ORDER BY "orgId", normalize("rmmAgentId", NFC), "id"
) AS n
WHERE d."id" = n."id"
  AND NOT EXISTS (SELECT 1 FROM "Device" AS e WHERE e."orgId" = n."orgId" AND e."rmmAgentId" = n."nfc");
