-- Erasure of a person by structure (docs/architecture.md, "Erasure of a person"; docs/api-contract.md §4.16): the
-- functions that find a contact's identifying values in stored copies and redact them, value by value, with one
-- spelling on both sides (NFC, then PostgreSQL's lower()), in query strings parsed pair by pair, paths segment by
-- segment and JSON string by string. They replace the one case-insensitive regular expression of every value the
-- contact ever had, whose cost grew with the product of the values and the stored text.

-- The one spelling every comparison of an erasure uses: Unicode NFC (composed), then lower(), with the dotless ı
-- as i: lower() makes both İ and I an i, so YILDIZ and Yıldız are one name only if ı is i too. One character for one
-- character, so positions found in the folded text are positions in the composed one. ASCII text is NFC already,
-- so only other text pays for the normalisation.
CREATE FUNCTION "erasure_fold"(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT translate(lower(CASE WHEN octet_length(t) = length(t) THEN t ELSE normalize(t, NFC) END), 'ı', 'i')
$$;

-- A value as an erasure compares it: folded, trimmed, each run of white space one space.
CREATE FUNCTION "erasure_value"(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT regexp_replace(regexp_replace("erasure_fold"(t), '\s+', ' ', 'g'), '^ | $', '', 'g')
$$;

-- The words of a text as an erasure finds candidates by them: the folded text cut at every character that is not a
-- letter, digit or underscore. A value found as a whole word has each of its words among them, so a value's rarest
-- word is a necessary condition that a hash join can test (docs/architecture.md, "Erasure of a person").
CREATE FUNCTION "erasure_words"(t TEXT) RETURNS TEXT[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT regexp_split_to_array("erasure_fold"(t), '[^[:alnum:]_]+')
$$;

-- The words of text that may hold JSON (a stored answer, a receiver's answer echoing a payload): its escapes (\",
-- \\, \n, \u001f) are cut out first, so that "Ann\nLee" gives ann and lee, not nlee.
CREATE FUNCTION "erasure_json_text_words"(t TEXT) RETURNS TEXT[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT "erasure_words"(CASE WHEN strpos(t, '\') = 0 THEN t ELSE regexp_replace(t, '\\(u[0-9a-fA-F]{4}|.)', ' ', 'g') END)
$$;

-- The regular expressions (over folded text) that find values as whole words: each value as written (runs of white
-- space matching any white space) and as JSON escapes it (a receiver's answer echoing a payload), longest first, at
-- most 50 values to an expression so that none grows past what PostgreSQL compiles quickly. Null for no values.
CREATE FUNCTION "erasure_patterns"(vals TEXT[]) RETURNS TEXT[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_agg(pattern ORDER BY chunk)
  FROM (
    SELECT chunk, '(?<![[:alnum:]_])(?:' || string_agg(alternative, '|' ORDER BY length(alternative) DESC, alternative)
                  || ')(?![[:alnum:]_])' AS pattern
    FROM (
      SELECT DISTINCT (rank - 1) / 50 AS chunk,
             replace(regexp_replace(spelled, '([\\^$.|?*+()\[\]{}])', '\\\1', 'g'), ' ', '\s+') AS alternative
      FROM (SELECT v, dense_rank() OVER (ORDER BY v) AS rank FROM unnest(vals) AS v WHERE v IS NOT NULL AND v <> '') AS ranked,
           LATERAL (VALUES (v), (substr(to_jsonb(v)::text, 2, length(to_jsonb(v)::text) - 2))) AS spellings(spelled)
    ) AS alternatives
    GROUP BY chunk
  ) AS chunks
$$;

-- Text with every whole-word occurrence of the values behind patterns (erasure_patterns) replaced by "[erased]",
-- compared in the folded spelling; the text comes back in NFC where it changed, unchanged otherwise. Where lower()
-- changes the number of characters (a collation provider other than libc), positions in the folded text say nothing
-- about the original, and a text with a match is replaced whole.
CREATE FUNCTION "erase_text"(t TEXT, patterns TEXT[]) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  composed TEXT;
  folded TEXT;
  pattern TEXT;
  result TEXT;
  pos INT;
  found_at INT;
  changed BOOLEAN := false;
BEGIN
  IF t IS NULL OR patterns IS NULL THEN
    RETURN t;
  END IF;
  composed := CASE WHEN octet_length(t) = length(t) THEN t ELSE normalize(t, NFC) END;
  FOREACH pattern IN ARRAY patterns LOOP
    folded := translate(lower(composed), 'ı', 'i');
    CONTINUE WHEN folded !~ pattern;
    IF length(folded) <> length(composed) THEN
      RETURN '[erased]';
    END IF;
    result := '';
    pos := 1;
    LOOP
      found_at := regexp_instr(folded, pattern, pos);
      EXIT WHEN found_at = 0;
      result := result || substr(composed, pos, found_at - pos) || '[erased]';
      pos := regexp_instr(folded, pattern, pos, 1, 1);
    END LOOP;
    composed := result || substr(composed, pos);
    changed := true;
  END LOOP;
  RETURN CASE WHEN changed THEN composed ELSE t END;
END
$$;

-- Percent- and form-decoding (`+` is a space) of one part of a query string. A part the stored query cut inside a
-- character (the log keeps 2,048 characters) loses that character; one that is no UTF-8 at all stays as written.
CREATE FUNCTION "form_decode"(t TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  attempt TEXT := t;
BEGIN
  IF strpos(t, '%') = 0 THEN
    RETURN replace(t, '+', ' ');
  END IF;
  FOR tries IN 1..2 LOOP
    BEGIN
      RETURN convert_from(
        (SELECT string_agg(CASE WHEN m[1] IS NULL THEN convert_to(m[2], 'UTF8') ELSE decode(m[1], 'hex') END, ''::bytea
                           ORDER BY n)
         FROM regexp_matches(replace(attempt, '+', ' '), '%([0-9A-Fa-f]{2})|([^%]+|%)', 'g') WITH ORDINALITY AS r(m, n)),
        'UTF8');
    EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
      attempt := regexp_replace(attempt, '(%[0-9A-Fa-f]{2})*%?[0-9A-Fa-f]?$', '');
    END;
  END LOOP;
  RETURN t;
END
$$;

-- Form-encoding as URLSearchParams writes it (the request log's spelling): letters, digits and *-._ as they are, a
-- space as +, every other byte of the UTF-8 as %XX.
CREATE FUNCTION "form_encode"(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(
           CASE WHEN c ~ '^[A-Za-z0-9*._-]$' THEN c
                WHEN c = ' ' THEN '+'
                ELSE upper(regexp_replace(encode(convert_to(c, 'UTF8'), 'hex'), '(..)', '%\1', 'g')) END,
           '' ORDER BY n), '')
  FROM regexp_split_to_table(t, '') WITH ORDINALITY AS s(c, n)
$$;

-- One part (a name or a value) of a query string with the values erased: decoded, erased, and encoded again where it
-- changed ("[erased]" kept readable); as stored where nothing changed.
CREATE FUNCTION "erase_form_part"(part TEXT, patterns TEXT[]) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  decoded TEXT := "form_decode"(part);
  erased TEXT := "erase_text"(decoded, patterns);
BEGIN
  IF erased IS NOT DISTINCT FROM decoded THEN
    RETURN part;
  END IF;
  RETURN replace("form_encode"(erased), '%5Berased%5D', '[erased]');
END
$$;

-- A query string (`a=1&b=x+y`, form-encoded) with the values erased, pair by pair: each name and each value is
-- decoded, matched and encoded again, so a value after encoded punctuation (%2C, %22, %28) is found as a word.
CREATE FUNCTION "erase_query"(query TEXT, patterns TEXT[]) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN patterns IS NULL OR query IS NULL THEN query ELSE (SELECT string_agg(
           CASE WHEN strpos(pair, '=') = 0 THEN "erase_form_part"(pair, patterns)
                ELSE "erase_form_part"(split_part(pair, '=', 1), patterns) || '='
                     || "erase_form_part"(substr(pair, strpos(pair, '=') + 1), patterns) END,
           '&' ORDER BY n)
  FROM unnest(string_to_array(query, '&')) WITH ORDINALITY AS p(pair, n)) END
$$;

-- A path as the request log keeps it (`/api/v1/contacts/ann@harbor.example`, decoded) with the values erased, segment
-- by segment.
CREATE FUNCTION "erase_segments"(path TEXT, patterns TEXT[]) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN patterns IS NULL OR path IS NULL THEN path ELSE
    (SELECT string_agg("erase_text"(segment, patterns), '/' ORDER BY n)
     FROM unnest(string_to_array(path, '/')) WITH ORDINALITY AS s(segment, n))
  END
$$;

-- A path with its query, as an idempotency record keeps it (`/contacts/bulk?note=ann%40harbor.example`), with the
-- values erased: the path segment by segment, the query by erase_query.
CREATE FUNCTION "erase_path"(target TEXT, patterns TEXT[]) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN patterns IS NULL OR target IS NULL OR strpos(target, '?') = 0 THEN "erase_segments"(target, patterns)
    ELSE "erase_segments"(split_part(target, '?', 1), patterns) || '?'
         || coalesce("erase_query"(substr(target, strpos(target, '?') + 1), patterns), '')
  END
$$;

-- Redacts one person inside a JSON document, at any depth (replaces the version of migration
-- 20261127130000_contact_erasure, whose pattern was one case-insensitive expression of every value):
-- * in the person's own representation (an object whose "id" is target, everything nested in it, or the whole
--   document when personal is true) the values of the keys in fields become "[erased]" (erase_all);
-- * every other string has each whole-word match of patterns (erasure_patterns of the person's values found in this
--   document, null for none) replaced by "[erased]", except under the keys in kept of an object that is not the
--   person's (another contact's own email or phone stays, even when it equals one of the person's values).
CREATE FUNCTION "erase_jsonb"(doc JSONB, target TEXT, fields TEXT[], patterns TEXT[], kept TEXT[], personal BOOLEAN)
RETURNS JSONB LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  mine BOOLEAN;
BEGIN
  CASE jsonb_typeof(doc)
  WHEN 'object' THEN
    mine := personal OR doc->>'id' = target;
    RETURN coalesce(
      (SELECT jsonb_object_agg(
         key,
         CASE
           WHEN mine AND key = ANY(fields) THEN "erase_all"(value)
           WHEN NOT mine AND key = ANY(kept) THEN value
           -- Numbers, booleans, null, and strings when no value is sought, come back as they are: no call for them.
           WHEN jsonb_typeof(value) IN ('object', 'array') OR (patterns IS NOT NULL AND jsonb_typeof(value) = 'string')
             THEN "erase_jsonb"(value, target, fields, patterns, kept, mine)
           ELSE value
         END)
       FROM jsonb_each(doc)),
      '{}'::jsonb
    );
  WHEN 'array' THEN
    RETURN coalesce(
      (SELECT jsonb_agg(
         CASE WHEN jsonb_typeof(value) IN ('object', 'array') OR (patterns IS NOT NULL AND jsonb_typeof(value) = 'string')
              THEN "erase_jsonb"(value, target, fields, patterns, kept, personal)
              ELSE value END
         ORDER BY ord)
       FROM jsonb_array_elements(doc) WITH ORDINALITY AS e(value, ord)),
      '[]'::jsonb
    );
  WHEN 'string' THEN
    IF patterns IS NULL THEN
      RETURN doc;
    END IF;
    RETURN to_jsonb("erase_text"(doc #>> '{}', patterns));
  ELSE
    RETURN doc;
  END CASE;
END
$$;

DROP FUNCTION "erase_jsonb"(JSONB, TEXT, TEXT[], TEXT, TEXT[], BOOLEAN);

-- A stored idempotent answer (the JSON envelope the request was answered with, as the idempotency layer stores it)
-- with the person redacted as in events (erase_jsonb), byte for byte as stored where nothing changed; the empty body
-- of a request still running has its values erased as text.
CREATE FUNCTION "erase_stored_answer"(body TEXT, target TEXT, fields TEXT[], patterns TEXT[], kept TEXT[])
RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  doc JSONB;
  erased JSONB;
BEGIN
  IF left(body, 1) <> '{' THEN
    RETURN "erase_text"(body, patterns);
  END IF;
  doc := body::jsonb;
  erased := "erase_jsonb"(doc, target, fields, patterns, kept, false);
  RETURN CASE WHEN erased = doc THEN body ELSE erased::text END;
END
$$;

-- A record's custom field values without those equal to one of vals (erasure_value spellings): a value that is the
-- person's identifier is cleared, as if set to null, rather than replaced, so it stays valid for its field's type.
CREATE FUNCTION "erase_custom_values"(doc JSONB, vals TEXT[]) RETURNS JSONB LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb)
  FROM jsonb_each(doc)
  WHERE NOT (jsonb_typeof(value) = 'string' AND "erasure_value"(value #>> '{}') = ANY(vals))
$$;

-- A request without an authenticated organisation keeps its query's parameter names only (docs/api-contract.md §1.2);
-- rows recorded before keep no value either.
UPDATE "AuditLog"
SET "query" = (SELECT string_agg(split_part(pair, '=', 1), '&' ORDER BY n)
               FROM unnest(string_to_array("query", '&')) WITH ORDINALITY AS p(pair, n))
WHERE "orgId" IS NULL AND strpos("query", '=') > 0;
