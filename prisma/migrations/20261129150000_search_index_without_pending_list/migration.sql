-- Quick search stays flat right after large writes (docs/architecture.md, "Search"): the two GIN indexes of
-- "SearchEntry" take each write into the index itself instead of a pending list. With the pending list (PostgreSQL's
-- default, up to 4 MB) every search reads the whole list until a vacuum merges it, and the planner, costing those
-- pages, turned even a small organisation's search into a scan of the table: after 100,000 entries written 500 at a
-- time, 4.2 ms for the large organisation and 14 ms for a small one, against 0.49 and 0.08 ms without the list. A
-- write of 500 entries costs about 3 ms more (8.2 against 5.2 ms).
ALTER INDEX "SearchEntry_orgId_document_idx" SET (fastupdate = off);
ALTER INDEX "SearchEntry_orgId_fuzzy_idx" SET (fastupdate = off);

-- What is pending now goes into the index at once.
SELECT gin_clean_pending_list('"SearchEntry_orgId_document_idx"'::regclass);
SELECT gin_clean_pending_list('"SearchEntry_orgId_fuzzy_idx"'::regclass);
