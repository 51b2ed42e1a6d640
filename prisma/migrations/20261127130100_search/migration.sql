-- Quick search (docs/architecture.md, "Search"): one "SearchEntry" per account, contact, deal and device, holding its
-- label, sublabel, a weighted tsvector of its identifying text and its normalised label for typo-tolerant matching,
-- kept by statement-level triggers in the transaction of every write (so a record is findable by the next request
-- after its write commits, and no service writes the index).

CREATE EXTENSION IF NOT EXISTS "pg_trgm";
CREATE EXTENSION IF NOT EXISTS "unaccent";
CREATE EXTENSION IF NOT EXISTS "btree_gin";

-- CreateTable
CREATE TABLE "SearchEntry" (
    "orgId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "sublabel" TEXT,
    "document" tsvector NOT NULL,
    "fuzzy" TEXT NOT NULL,

    CONSTRAINT "SearchEntry_pkey" PRIMARY KEY ("type","id")
);

-- CreateIndex
CREATE INDEX "SearchEntry_orgId_document_idx" ON "SearchEntry" USING GIN ("orgId", "document");

-- CreateIndex
CREATE INDEX "SearchEntry_orgId_fuzzy_idx" ON "SearchEntry" USING GIN ("orgId", "fuzzy" gin_trgm_ops);

-- AddForeignKey
ALTER TABLE "SearchEntry" ADD CONSTRAINT "SearchEntry_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Text as search compares it: accents removed (unaccent's own rules) and lower-case. unaccent() is only STABLE (it
-- reads its dictionary through the search path); naming the dictionary makes the result immutable. A plain SQL
-- expression, so PostgreSQL inlines it (a SET clause on these functions made every call re-plan: 1 ms an entry).
CREATE FUNCTION "search_normalise"(value TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT lower(unaccent('unaccent'::regdictionary, value))
$$;

-- The words of a text with one weight, as the index and the query both split it: normalised, cut at white space and
-- punctuation, plus each white-space-separated token with its punctuation removed ("WS-001" gives ws, 001 and ws001;
-- "O'Brien" o, brien and obrien), so a query written either way finds it; a joined token that is already a word is
-- not repeated (repeats would raise its rank). PL/pgSQL: its expressions are planned once per session.
CREATE FUNCTION "search_part"(value TEXT, weight "char") RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  normalised TEXT;
  words tsvector;
BEGIN
  IF value IS NULL OR value = '' THEN
    RETURN ''::tsvector;
  END IF;
  normalised := "search_normalise"(value);
  words := to_tsvector('simple', regexp_replace(normalised, '[[:space:][:punct:]]+', ' ', 'g'));
  IF normalised ~ '[[:punct:]]' THEN
    words := words
      || ts_delete(to_tsvector('simple', regexp_replace(normalised, '[[:punct:]]+', '', 'g')), tsvector_to_array(words));
  END IF;
  RETURN setweight(words, weight);
END
$$;

-- A phone number's digits, and each of their endings of 7 digits or more, so "5551234567" and "123 4567" find
-- "+1 (555) 123-4567" whether the country code is typed or not.
CREATE FUNCTION "search_phone_digits"(phone TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT string_agg(substr(digits, start), ' ')
  FROM (SELECT regexp_replace(phone, '[^0-9]', '', 'g') AS digits) AS d,
       generate_series(1, greatest(length(digits) - 6, 1)) AS start
  WHERE digits <> ''
$$;

-- The query of a text: every word as a prefix (word:*), all of them required; with several words, also the words run
-- together as one prefix ("ws 001" finds "WS001"). Null when the text has no word.
CREATE FUNCTION "search_query"(value TEXT) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT CASE
    WHEN count(*) = 0 THEN NULL
    WHEN count(*) = 1 THEN to_tsquery('simple', quote_literal(min(word)) || ':*')
    ELSE to_tsquery('simple', '(' || string_agg(quote_literal(word) || ':*', ' & ') || ') | '
                             || quote_literal(string_agg(word, '')) || ':*')
  END
  FROM (
    SELECT word FROM regexp_split_to_table("search_normalise"(value), '[[:space:][:punct:]]+') AS word WHERE word <> ''
  ) AS words
$$;

-- The entry of each type: label, sublabel and the identifying text of docs/api-contract.md §4.17 (A: the label's
-- words, B: identifiers).
CREATE FUNCTION "search_entry_account"(a "Account") RETURNS "SearchEntry" LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN ROW(a."orgId", 'account', a."id", a."name", coalesce(a."domain", a."externalId"),
             "search_part"(a."name", 'A') || "search_part"(concat_ws(' ', a."domain", a."externalId"), 'B'),
             "search_normalise"(a."name"))::"SearchEntry";
END
$$;

CREATE FUNCTION "search_entry_contact"(c "Contact") RETURNS "SearchEntry" LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  name TEXT := nullif(concat_ws(' ', c."firstName", c."lastName"), '');
BEGIN
  RETURN ROW(c."orgId", 'contact', c."id", coalesce(name, c."email"), c."email",
             "search_part"(name, 'A')
               || "search_part"(concat_ws(' ', c."email", c."phone", "search_phone_digits"(c."phone")), 'B'),
             "search_normalise"(coalesce(name, c."email")))::"SearchEntry";
END
$$;

CREATE FUNCTION "search_entry_deal"(d "Deal") RETURNS "SearchEntry" LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN ROW(d."orgId", 'deal', d."id", d."name", d."stage"::text, "search_part"(d."name", 'A'),
             "search_normalise"(d."name"))::"SearchEntry";
END
$$;

CREATE FUNCTION "search_entry_device"(v "Device") RETURNS "SearchEntry" LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN ROW(v."orgId", 'device', v."id", v."hostname", v."rmmAgentId",
             "search_part"(v."hostname", 'A') || "search_part"(v."rmmAgentId", 'B'),
             "search_normalise"(v."hostname"))::"SearchEntry";
END
$$;

-- Keeps the entries of one table's rows: statement-level, over the rows the statement changed (a bulk of 500 is one
-- INSERT … SELECT, not 500 calls). Arguments: the type, then the columns an entry is made of; an update recomputes
-- only the rows where one of those changed (a device going offline costs nothing here), and rewrites an entry only
-- when what it holds changed.
CREATE FUNCTION "search_sync"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
  kind TEXT := TG_ARGV[0];
  changed TEXT := 'true';
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM "SearchEntry" AS s USING old_rows AS o WHERE s."type" = kind AND s."id" = o."id";
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    SELECT format('(%s) IS DISTINCT FROM (%s)',
                  string_agg(format('n.%I', column_name), ', '), string_agg(format('o.%I', column_name), ', '))
    INTO changed
    FROM unnest(TG_ARGV[1:]) AS column_name;
  END IF;
  EXECUTE format(
    'INSERT INTO "SearchEntry" SELECT e.* FROM new_rows AS n %s CROSS JOIN LATERAL %I(n) AS e WHERE %s
     ON CONFLICT ("type", "id") DO UPDATE
       SET "label" = excluded."label", "sublabel" = excluded."sublabel", "document" = excluded."document",
           "fuzzy" = excluded."fuzzy"
       WHERE ("SearchEntry"."label", "SearchEntry"."sublabel", "SearchEntry"."document", "SearchEntry"."fuzzy")
             IS DISTINCT FROM (excluded."label", excluded."sublabel", excluded."document", excluded."fuzzy")',
    CASE WHEN TG_OP = 'UPDATE' THEN 'JOIN old_rows AS o ON o."id" = n."id"' ELSE '' END,
    'search_entry_' || kind,
    changed);
  RETURN NULL;
END
$$;

CREATE TRIGGER "Account_search_insert" AFTER INSERT ON "Account" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account');
CREATE TRIGGER "Account_search_update" AFTER UPDATE ON "Account" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account', 'name', 'domain', 'externalId');
CREATE TRIGGER "Account_search_delete" AFTER DELETE ON "Account" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account');
CREATE TRIGGER "Contact_search_insert" AFTER INSERT ON "Contact" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact');
CREATE TRIGGER "Contact_search_update" AFTER UPDATE ON "Contact" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact', 'email', 'firstName', 'lastName', 'phone');
CREATE TRIGGER "Contact_search_delete" AFTER DELETE ON "Contact" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact');
CREATE TRIGGER "Deal_search_insert" AFTER INSERT ON "Deal" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal');
CREATE TRIGGER "Deal_search_update" AFTER UPDATE ON "Deal" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal', 'name', 'stage');
CREATE TRIGGER "Deal_search_delete" AFTER DELETE ON "Deal" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal');
CREATE TRIGGER "Device_search_insert" AFTER INSERT ON "Device" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device');
CREATE TRIGGER "Device_search_update" AFTER UPDATE ON "Device" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device', 'hostname', 'rmmAgentId');
CREATE TRIGGER "Device_search_delete" AFTER DELETE ON "Device" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device');

-- The records that exist already.
INSERT INTO "SearchEntry" SELECT e.* FROM "Account" AS a CROSS JOIN LATERAL "search_entry_account"(a) AS e;
INSERT INTO "SearchEntry" SELECT e.* FROM "Contact" AS c CROSS JOIN LATERAL "search_entry_contact"(c) AS e;
INSERT INTO "SearchEntry" SELECT e.* FROM "Deal" AS d CROSS JOIN LATERAL "search_entry_deal"(d) AS e;
INSERT INTO "SearchEntry" SELECT e.* FROM "Device" AS v CROSS JOIN LATERAL "search_entry_device"(v) AS e;
