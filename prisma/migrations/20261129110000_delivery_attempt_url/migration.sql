-- The URL each delivery attempt was POSTed to (docs/api-contract.md §2.11): an endpoint's URL can change between
-- attempts, and a delivery's detail shows where each attempt went. Attempts recorded before have none (null).
ALTER TABLE "DeliveryAttempt" ADD COLUMN     "url" TEXT;
