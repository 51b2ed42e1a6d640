import { randomBytes } from "node:crypto";

// Random bytes are drawn 4 KiB at a time: one randomBytes call costs about 8 µs here whatever its size, which a bulk
// request or the demo seed (tens of thousands of ids) paid once per id.
const POOL_BYTES = 4_096;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `size` bytes from the operating system's cryptographically secure generator (`crypto.randomBytes`), served from a
 * pool refilled 4 KiB at a time; each byte is handed out once. The result is a view into the pool (a refill allocates
 * a new one, so it is never overwritten); `size` ≤ 4,096 bytes. Used for record, event and request ids
 * (docs/architecture.md, "Memory and speed").
 */
export function randomChunk(size: number): Buffer {
  if (offset + size > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const chunk = pool.subarray(offset, offset + size);
  offset += size;
  return chunk;
}

/**
 * A new record id for rows inserted with raw SQL (bulk endpoints): `c` + milliseconds since the epoch in base 36 + 80
 * random bits in hex, about 30 lowercase characters (docs/api-contract.md §2.2: opaque, cuid style). The time prefix
 * keeps inserts local in the primary-key index. `@paralleldrive/cuid2` costs ~150 µs an id here (≈75 ms per 500-item
 * bulk request); this costs under 1 µs.
 */
export function newId(): string {
  return `c${Date.now().toString(36)}${randomChunk(10).toString("hex")}`;
}
