-- Erasure of a contact (docs/architecture.md, "Erasure of a person"): the functions that redact a person's data inside
-- stored JSON (events' "data" and "previous", stored idempotent answers) in one UPDATE over the rows that hold it.

-- Every leaf value of a document (string, number, boolean) becomes "[erased]"; null stays null, so an empty field
-- stays empty. Applied to the value of a personal field: a text, or a custom field's object of values.
CREATE FUNCTION "erase_all"(doc JSONB) RETURNS JSONB LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  CASE jsonb_typeof(doc)
  WHEN 'object' THEN
    RETURN coalesce((SELECT jsonb_object_agg(key, "erase_all"(value)) FROM jsonb_each(doc)), '{}'::jsonb);
  WHEN 'array' THEN
    RETURN coalesce(
      (SELECT jsonb_agg("erase_all"(value) ORDER BY ord) FROM jsonb_array_elements(doc) WITH ORDINALITY AS e(value, ord)),
      '[]'::jsonb
    );
  WHEN 'null' THEN
    RETURN doc;
  ELSE
    RETURN '"[erased]"'::jsonb;
  END CASE;
END
$$;

-- Redacts one person inside a JSON document, at any depth:
-- * in the person's own representation (an object whose "id" is target, everything nested in it, or the whole
--   document when personal is true) the values of the keys in fields become "[erased]" (erase_all);
-- * every other string has each match of pattern (a case-insensitive regular expression of the person's identifying
--   values, null for none) replaced by "[erased]", except under the keys in kept of an object that is not the
--   person's (another contact's own email or phone stays, even when it equals one of the person's values).
CREATE FUNCTION "erase_jsonb"(doc JSONB, target TEXT, fields TEXT[], pattern TEXT, kept TEXT[], personal BOOLEAN)
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
           ELSE "erase_jsonb"(value, target, fields, pattern, kept, mine)
         END)
       FROM jsonb_each(doc)),
      '{}'::jsonb
    );
  WHEN 'array' THEN
    RETURN coalesce(
      (SELECT jsonb_agg("erase_jsonb"(value, target, fields, pattern, kept, personal) ORDER BY ord)
       FROM jsonb_array_elements(doc) WITH ORDINALITY AS e(value, ord)),
      '[]'::jsonb
    );
  WHEN 'string' THEN
    IF pattern IS NULL THEN
      RETURN doc;
    END IF;
    RETURN to_jsonb(regexp_replace(doc #>> '{}', pattern, '[erased]', 'gi'));
  ELSE
    RETURN doc;
  END CASE;
END
$$;
