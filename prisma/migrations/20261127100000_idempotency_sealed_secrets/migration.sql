-- Stored idempotent answers keep no webhook signing secret in plaintext: the secret of a stored create or rotation
-- answer becomes "whsec-sha256:" and its SHA-256 in hex, as the service now stores it; a replay reads the secret back
-- from the endpoint while it is still the endpoint's current one.
UPDATE "IdempotencyKey" AS k
SET "responseBody" = replace(
  k."responseBody",
  '"' || s."secret" || '"',
  '"whsec-sha256:' || encode(sha256(convert_to(s."secret", 'UTF8')), 'hex') || '"'
)
FROM (
  SELECT "id", substring("responseBody" FROM '"secret":"(whsec_[A-Za-z0-9+/=_-]+)"') AS "secret"
  FROM "IdempotencyKey"
  WHERE "path" LIKE '/webhook-endpoints%'
) AS s
WHERE s."id" = k."id" AND s."secret" IS NOT NULL;
