-- Searchable custom fields in quick search (docs/api-contract.md §4.17, docs/architecture.md "Search"): the values of
-- an account's, contact's, deal's or device's custom fields marked `searchable` (and not archived) are part of its
-- search entry, with weight C (below the label's words, A, and the identifiers, B). The entry is recomputed when the
-- record's customFields change, and every entry holding a field's values when the field starts or stops counting
-- (searchable set or cleared, archived or restored), in the transaction of that change.

-- The text of a record's searchable custom values: strings and numbers as they are, a multiSelect's picks, a
-- currency's amount and code; booleans carry no words. Null when none is searchable. PL/pgSQL, so its two queries
-- are planned once per session; one index range scan over the organisation's fields of that resource per record.
CREATE FUNCTION "search_custom_text"(org TEXT, kind "CustomFieldResource", fields JSONB) RETURNS TEXT
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  keys TEXT[];
  result TEXT;
BEGIN
  IF fields IS NULL OR fields = '{}'::jsonb THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(f."key") INTO keys FROM "CustomField" AS f
  WHERE f."orgId" = org AND f."resource" = kind AND f."searchable" AND f."archivedAt" IS NULL;
  IF keys IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT string_agg(
           CASE jsonb_typeof(v.value)
             WHEN 'array' THEN (SELECT string_agg(pick, ' ') FROM jsonb_array_elements_text(v.value) AS pick)
             WHEN 'object' THEN concat_ws(' ', v.value ->> 'amount', v.value ->> 'currency')
             WHEN 'boolean' THEN NULL
             ELSE v.value #>> '{}'
           END, ' ' ORDER BY v.key)
  INTO result
  FROM jsonb_each(fields) AS v
  WHERE v.key = ANY(keys);
  RETURN result;
END
$$;

-- The entries of each type, as in 20261127130100_search, plus the searchable custom values (C). STABLE now: they read
-- the organisation's field definitions.
CREATE OR REPLACE FUNCTION "search_entry_account"(a "Account") RETURNS "SearchEntry" LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN ROW(a."orgId", 'account', a."id", a."name", coalesce(a."domain", a."externalId"),
             "search_part"(a."name", 'A') || "search_part"(concat_ws(' ', a."domain", a."externalId"), 'B')
               || "search_part"("search_custom_text"(a."orgId", 'account', a."customFields"), 'C'),
             "search_normalise"(a."name"))::"SearchEntry";
END
$$;

CREATE OR REPLACE FUNCTION "search_entry_contact"(c "Contact") RETURNS "SearchEntry" LANGUAGE plpgsql STABLE AS $$
DECLARE
  name TEXT := nullif(concat_ws(' ', c."firstName", c."lastName"), '');
BEGIN
  RETURN ROW(c."orgId", 'contact', c."id", coalesce(name, c."email"), c."email",
             "search_part"(name, 'A')
               || "search_part"(concat_ws(' ', c."email", c."phone", "search_phone_digits"(c."phone")), 'B')
               || "search_part"("search_custom_text"(c."orgId", 'contact', c."customFields"), 'C'),
             "search_normalise"(coalesce(name, c."email")))::"SearchEntry";
END
$$;

CREATE OR REPLACE FUNCTION "search_entry_deal"(d "Deal") RETURNS "SearchEntry" LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN ROW(d."orgId", 'deal', d."id", d."name", d."stage"::text,
             "search_part"(d."name", 'A') || "search_part"("search_custom_text"(d."orgId", 'deal', d."customFields"), 'C'),
             "search_normalise"(d."name"))::"SearchEntry";
END
$$;

CREATE OR REPLACE FUNCTION "search_entry_device"(v "Device") RETURNS "SearchEntry" LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN ROW(v."orgId", 'device', v."id", v."hostname", v."rmmAgentId",
             "search_part"(v."hostname", 'A') || "search_part"(v."rmmAgentId", 'B')
               || "search_part"("search_custom_text"(v."orgId", 'device', v."customFields"), 'C'),
             "search_normalise"(v."hostname"))::"SearchEntry";
END
$$;

-- An update recomputes an entry when its custom values change too.
DROP TRIGGER "Account_search_update" ON "Account";
CREATE TRIGGER "Account_search_update" AFTER UPDATE ON "Account" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account', 'name', 'domain', 'externalId', 'customFields');
DROP TRIGGER "Contact_search_update" ON "Contact";
CREATE TRIGGER "Contact_search_update" AFTER UPDATE ON "Contact" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact', 'email', 'firstName', 'lastName', 'phone', 'customFields');
DROP TRIGGER "Deal_search_update" ON "Deal";
CREATE TRIGGER "Deal_search_update" AFTER UPDATE ON "Deal" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal', 'name', 'stage', 'customFields');
DROP TRIGGER "Device_search_update" ON "Device";
CREATE TRIGGER "Device_search_update" AFTER UPDATE ON "Device" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device', 'hostname', 'rmmAgentId', 'customFields');

-- Re-indexes the organisation's records of the field's resource that hold a value of it, when the field starts or
-- stops counting for search. Tasks have no search entries.
CREATE FUNCTION "search_custom_field_sync"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."resource" = 'task'
     OR (OLD."searchable" AND OLD."archivedAt" IS NULL) IS NOT DISTINCT FROM (NEW."searchable" AND NEW."archivedAt" IS NULL) THEN
    RETURN NULL;
  END IF;
  EXECUTE format(
    'INSERT INTO "SearchEntry" SELECT e.* FROM %I AS n CROSS JOIN LATERAL %I(n) AS e
     WHERE n."orgId" = $1 AND n."customFields" ? $2
     ON CONFLICT ("type", "id") DO UPDATE SET "document" = excluded."document"
       WHERE "SearchEntry"."document" IS DISTINCT FROM excluded."document"',
    initcap(NEW."resource"::text), 'search_entry_' || NEW."resource")
  USING NEW."orgId", NEW."key";
  RETURN NULL;
END
$$;

CREATE TRIGGER "CustomField_search_update" AFTER UPDATE OF "searchable", "archivedAt" ON "CustomField"
  FOR EACH ROW EXECUTE FUNCTION "search_custom_field_sync"();

-- The values that exist already.
INSERT INTO "SearchEntry" SELECT e.* FROM "Account" AS a CROSS JOIN LATERAL "search_entry_account"(a) AS e
  WHERE a."customFields" <> '{}' ON CONFLICT ("type", "id") DO UPDATE SET "document" = excluded."document";
INSERT INTO "SearchEntry" SELECT e.* FROM "Contact" AS c CROSS JOIN LATERAL "search_entry_contact"(c) AS e
  WHERE c."customFields" <> '{}' ON CONFLICT ("type", "id") DO UPDATE SET "document" = excluded."document";
INSERT INTO "SearchEntry" SELECT e.* FROM "Deal" AS d CROSS JOIN LATERAL "search_entry_deal"(d) AS e
  WHERE d."customFields" <> '{}' ON CONFLICT ("type", "id") DO UPDATE SET "document" = excluded."document";
INSERT INTO "SearchEntry" SELECT e.* FROM "Device" AS v CROSS JOIN LATERAL "search_entry_device"(v) AS e
  WHERE v."customFields" <> '{}' ON CONFLICT ("type", "id") DO UPDATE SET "document" = excluded."document";
