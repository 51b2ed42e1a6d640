-- Keyed API key checksums (docs/api-contract.md §5.2, docs/architecture.md "API keys and the key cache"): new keys
-- carry an HMAC-SHA256 checksum keyed with a secret of the service, so a key that fails it is refused without a
-- lookup. Every key issued so far has the first format (a CRC32 checksum anyone can compute): the column's default
-- marks them, and keys an earlier version inserts during a rolling upgrade, as such; each process keeps the hashes of
-- the usable ones in memory.
ALTER TABLE "ApiKey" ADD COLUMN     "checksumKeyed" BOOLEAN NOT NULL DEFAULT false;

-- The checksum secret: one row, inserted by the first process that needs it (server/services/key-recognition.ts).
CREATE TABLE "ApiKeyChecksumSecret" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ApiKeyChecksumSecret_pkey" PRIMARY KEY ("id")
);
