// The API key format (docs/api-contract.md §5.2; docs/architecture.md, "API keys and the key cache"): what a key looks
// like, and what can be told about a presented one without any I/O.
import { createHmac, hash, type KeyObject, randomInt, timingSafeEqual } from "node:crypto";
import { crc32 } from "node:zlib";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** Random base62 characters of a key: 32, about 190 bits. */
const RANDOM_LENGTH = 32;
/**
 * Base62 characters of the keyed checksum: 8, i.e. the HMAC-SHA256 reduced modulo 62^8 (about 2^47.6), so a forged
 * key passes with probability 1 in 2.2 × 10^14.
 */
const CHECKSUM_LENGTH = 8;
const CHECKSUM_MODULUS = 62n ** BigInt(CHECKSUM_LENGTH);
const KEY_PATTERN = new RegExp(`^msp_(live|test)_([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);
// The first format, issued until keyed checksums: 30 random characters and a CRC32 anyone can compute. Shorter than
// the current one, so a key's length tells its format.
const LEGACY_KEY_PATTERN = /^msp_(live|test)_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/;
const LEGACY_CHECKSUM_LENGTH = 6;

function toBase62(value: bigint, width: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out;
}

function keyedChecksum(body: string, secret: KeyObject): string {
  const mac = createHmac("sha256", secret).update(body).digest();
  // 64 bits of the MAC modulo 62^8: the bias of the reduction is below 1 in 80,000.
  return toBase62(mac.readBigUInt64BE(0) % CHECKSUM_MODULUS, CHECKSUM_LENGTH);
}

function sameText(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** A newly generated API key: the raw value (shown once), its SHA-256 hex hash (stored) and a display prefix. */
export interface GeneratedApiKey {
  raw: string;
  hash: string;
  prefix: string;
}

/**
 * Generates an API key `msp_live_…` or `msp_test_…` (docs/api-contract.md §5.2): 32 random base62 characters (about
 * 190 bits) followed by an 8-character checksum keyed with the service's checksum secret (HMAC-SHA256 of everything
 * before it), so a key that fails the checksum is refused before any database lookup.
 * @param checksumSecret the service's checksum secret as a key object (server/platform/api-keys/recognition.ts; a key
 *   object rather than bytes: HMAC then costs a third), the same for every instance.
 * @returns the raw key, its hash and its 13-character display prefix (`msp_live_AbCd`).
 */
export function generateApiKey(isTest: boolean, checksumSecret: KeyObject): GeneratedApiKey {
  const head = isTest ? "msp_test_" : "msp_live_";
  let random = "";
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  const raw = `${head}${random}${keyedChecksum(head + random, checksumSecret)}`;
  return { raw, hash: hashApiKey(raw), prefix: raw.slice(0, head.length + 4) };
}

/** SHA-256 hex of a raw key: the only form stored (docs/api-contract.md §5.3). */
export function hashApiKey(raw: string): string {
  return hash("sha256", raw, "hex");
}

/** What a presented key's shape says: its mode, and whether it has the first (legacy) format. */
export interface ParsedApiKey {
  isTest: boolean;
  /**
   * The first format (30 random characters and a CRC32): honoured only for the keys of that format still usable when
   * the process started (docs/architecture.md, "API keys and the key cache").
   */
  legacy: boolean;
}

/**
 * Checks a presented key's shape and checksum without any I/O: the keyed checksum of the current format, or the CRC32
 * of the first format.
 * @param checksumSecret the service's checksum secret (server/platform/api-keys/recognition.ts).
 * @returns `{ isTest, legacy }` when well-formed, `null` otherwise (the caller answers 401 `unauthorized`,
 *   docs/api-contract.md §5.4).
 */
export function parseApiKey(raw: string, checksumSecret: KeyObject): ParsedApiKey | null {
  const current = KEY_PATTERN.exec(raw);
  if (current) {
    const head = `msp_${current[1]}_`;
    if (!sameText(keyedChecksum(head + current[2], checksumSecret), current[3] as string)) return null;
    return { isTest: current[1] === "test", legacy: false };
  }
  const legacy = LEGACY_KEY_PATTERN.exec(raw);
  if (!legacy) return null;
  const head = `msp_${legacy[1]}_`;
  if (toBase62(BigInt(crc32(head + legacy[2])), LEGACY_CHECKSUM_LENGTH) !== legacy[3]) return null;
  return { isTest: legacy[1] === "test", legacy: true };
}
