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
-- reads its dictionary through the search path); the dictionary named with this schema makes the result immutable,
-- and the function resolves names in the schema the migration ran in, whatever the caller's search path.
CREATE FUNCTION "search_normalise"(value TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
SET search_path FROM CURRENT AS $$
  SELECT lower(unaccent('unaccent'::regdictionary, value))
$$;

-- The words of a text, as the index and the query both split it: normalised, cut at white space and punctuation, plus
-- each white-space-separated token with its punctuation removed ("WS-001" gives ws, 001 and ws001; "O'Brien" o, brien
-- and obrien), so a query written either way finds it.
CREATE FUNCTION "search_words"(value TEXT) RETURNS TEXT[] LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
SET search_path FROM CURRENT AS $$
  SELECT coalesce(array_agg(DISTINCT word), '{}')
  FROM (
    SELECT regexp_split_to_table("search_normalise"(value), '[[:space:][:punct:]]+') AS word
    UNION ALL
    SELECT regexp_replace(token, '[[:punct:]]+', '', 'g')
    FROM regexp_split_to_table("search_normalise"(value), '[[:space:]]+') AS token
  ) AS words
  WHERE word <> ''
$$;

-- A weighted document: A for the label's words, B for identifiers, C for other searchable text.
CREATE FUNCTION "search_document"(label TEXT, identifiers TEXT, other TEXT) RETURNS tsvector LANGUAGE sql IMMUTABLE
PARALLEL SAFE SET search_path FROM CURRENT AS $$
  SELECT setweight(to_tsvector('simple', array_to_string("search_words"(coalesce(label, '')), ' ')), 'A')
      || setweight(to_tsvector('simple', array_to_string("search_words"(coalesce(identifiers, '')), ' ')), 'B')
      || setweight(to_tsvector('simple', array_to_string("search_words"(coalesce(other, '')), ' ')), 'C')
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
CREATE FUNCTION "search_query"(value TEXT) RETURNS tsquery LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
SET search_path FROM CURRENT AS $$
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

-- The entry of each type: label, sublabel and the identifying text of docs/api-contract.md §4.17.
CREATE FUNCTION "search_entry_account"(a "Account") RETURNS "SearchEntry" LANGUAGE sql IMMUTABLE
SET search_path FROM CURRENT AS $$
  SELECT a."orgId", 'account', a."id", a."name", coalesce(a."domain", a."externalId"),
         "search_document"(a."name", concat_ws(' ', a."domain", a."externalId"), NULL), "search_normalise"(a."name")
$$;

CREATE FUNCTION "search_entry_contact"(c "Contact") RETURNS "SearchEntry" LANGUAGE sql IMMUTABLE
SET search_path FROM CURRENT AS $$
  SELECT c."orgId", 'contact', c."id", coalesce(nullif(concat_ws(' ', c."firstName", c."lastName"), ''), c."email"),
         c."email",
         "search_document"(concat_ws(' ', c."firstName", c."lastName"),
                           concat_ws(' ', c."email", c."phone", "search_phone_digits"(c."phone")), NULL),
         "search_normalise"(coalesce(nullif(concat_ws(' ', c."firstName", c."lastName"), ''), c."email"))
$$;

CREATE FUNCTION "search_entry_deal"(d "Deal") RETURNS "SearchEntry" LANGUAGE sql IMMUTABLE
SET search_path FROM CURRENT AS $$
  SELECT d."orgId", 'deal', d."id", d."name", d."stage"::text,
         "search_document"(d."name", NULL, NULL), "search_normalise"(d."name")
$$;

CREATE FUNCTION "search_entry_device"(v "Device") RETURNS "SearchEntry" LANGUAGE sql IMMUTABLE
SET search_path FROM CURRENT AS $$
  SELECT v."orgId", 'device', v."id", v."hostname", v."rmmAgentId",
         "search_document"(v."hostname", v."rmmAgentId", NULL), "search_normalise"(v."hostname")
$$;

-- Keeps the entries of one table's rows: statement-level, over the rows the statement changed (a bulk of 500 is one
-- INSERT … SELECT, not 500 calls); an update rewrites an entry only when what it holds changed.
CREATE FUNCTION "search_sync"() RETURNS TRIGGER LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM "SearchEntry" AS s USING old_rows AS o WHERE s."type" = TG_ARGV[0] AND s."id" = o."id";
    RETURN NULL;
  END IF;
  EXECUTE format(
    'INSERT INTO "SearchEntry" SELECT e.* FROM new_rows AS n CROSS JOIN LATERAL %I(n) AS e
     ON CONFLICT ("type", "id") DO UPDATE
       SET "label" = excluded."label", "sublabel" = excluded."sublabel", "document" = excluded."document",
           "fuzzy" = excluded."fuzzy"
       WHERE ("SearchEntry"."label", "SearchEntry"."sublabel", "SearchEntry"."document", "SearchEntry"."fuzzy")
             IS DISTINCT FROM (excluded."label", excluded."sublabel", excluded."document", excluded."fuzzy")',
    'search_entry_' || TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE TRIGGER "Account_search_insert" AFTER INSERT ON "Account" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account');
CREATE TRIGGER "Account_search_update" AFTER UPDATE ON "Account" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account');
CREATE TRIGGER "Account_search_delete" AFTER DELETE ON "Account" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('account');
CREATE TRIGGER "Contact_search_insert" AFTER INSERT ON "Contact" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact');
CREATE TRIGGER "Contact_search_update" AFTER UPDATE ON "Contact" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact');
CREATE TRIGGER "Contact_search_delete" AFTER DELETE ON "Contact" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('contact');
CREATE TRIGGER "Deal_search_insert" AFTER INSERT ON "Deal" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal');
CREATE TRIGGER "Deal_search_update" AFTER UPDATE ON "Deal" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal');
CREATE TRIGGER "Deal_search_delete" AFTER DELETE ON "Deal" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('deal');
CREATE TRIGGER "Device_search_insert" AFTER INSERT ON "Device" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device');
CREATE TRIGGER "Device_search_update" AFTER UPDATE ON "Device" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device');
CREATE TRIGGER "Device_search_delete" AFTER DELETE ON "Device" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "search_sync"('device');

-- The records that exist already.
INSERT INTO "SearchEntry" SELECT e.* FROM "Account" AS a CROSS JOIN LATERAL "search_entry_account"(a) AS e;
INSERT INTO "SearchEntry" SELECT e.* FROM "Contact" AS c CROSS JOIN LATERAL "search_entry_contact"(c) AS e;
INSERT INTO "SearchEntry" SELECT e.* FROM "Deal" AS d CROSS JOIN LATERAL "search_entry_deal"(d) AS e;
INSERT INTO "SearchEntry" SELECT e.* FROM "Device" AS v CROSS JOIN LATERAL "search_entry_device"(v) AS e;
