-- Searchable custom fields re-indexed in the background (docs/api-contract.md §2.13, §4.17; docs/architecture.md,
-- "Search"). Until now the trigger on "CustomField" recomputed, in the transaction of the definition's change, the
-- search entry of every record of the organisation holding a value of the field: a PATCH of `searchable` on 100,000
-- accounts was a statement of seconds inside the request, holding the records' entries locked. Now the trigger only
-- marks the field (one row, in the same transaction, so no change is ever lost), and the `search-reindex` Inngest
-- function (or, without a worker, the process after the commit) recomputes the entries a window of records at a time.

-- CreateTable
CREATE TABLE "SearchReindex" (
    "orgId" TEXT NOT NULL,
    "resource" "CustomFieldResource" NOT NULL,
    "key" TEXT NOT NULL,
    "requestedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "afterCreatedAt" TIMESTAMP(3),
    "afterId" TEXT,

    CONSTRAINT "SearchReindex_pkey" PRIMARY KEY ("orgId","resource","key")
);

-- AddForeignKey
ALTER TABLE "SearchReindex" ADD CONSTRAINT "SearchReindex_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The same condition as before (the field starts or stops counting: searchable set or cleared, archived), a mark
-- instead of the pass. A field changed again while it waits, or while a window of it is being re-indexed, starts from
-- the first record again: the upsert waits for the window's row lock, so the next window sees the new definition.
CREATE OR REPLACE FUNCTION "search_custom_field_sync"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."resource" = 'task'
     OR (OLD."searchable" AND OLD."archivedAt" IS NULL) IS NOT DISTINCT FROM (NEW."searchable" AND NEW."archivedAt" IS NULL) THEN
    RETURN NULL;
  END IF;
  INSERT INTO "SearchReindex" ("orgId", "resource", "key", "requestedAt")
  VALUES (NEW."orgId", NEW."resource", NEW."key", now() AT TIME ZONE 'UTC')
  ON CONFLICT ("orgId", "resource", "key") DO UPDATE
    SET "requestedAt" = excluded."requestedAt", "afterCreatedAt" = NULL, "afterId" = NULL;
  RETURN NULL;
END
$$;
