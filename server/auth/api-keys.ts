import { createHash, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SECRET_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^msp_(live|test)_([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);

function toBase62(value: number, width: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksum(body: string): string {
  return toBase62(crc32(body), CHECKSUM_LENGTH);
}

/** A newly generated API key: the raw value (shown once), its SHA-256 hex hash (stored) and a display prefix. */
export interface GeneratedApiKey {
  raw: string;
  hash: string;
  prefix: string;
}

/**
 * Generates an API key `msp_live_…` or `msp_test_…` (docs/api-contract.md §5.2): 30 random base62 characters (≈178
 * bits) followed by a 6-character CRC32 checksum, so malformed keys are refused before any database lookup
 * (docs/architecture.md, "API keys and the key cache").
 */
export function generateApiKey(isTest: boolean): GeneratedApiKey {
  const head = isTest ? "msp_test_" : "msp_live_";
  let secret = "";
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(62)];
  const raw = `${head}${secret}${checksum(head + secret)}`;
  return { raw, hash: hashApiKey(raw), prefix: raw.slice(0, head.length + 4) };
}

/** SHA-256 hex of a raw key: the only form stored (docs/api-contract.md §5.3). */
export function hashApiKey(raw: string): string {
  return createHash("sha256").update(raw).digest("hex");
}

/**
 * Checks a presented key's shape and checksum without any I/O.
 * @returns `{ isTest }` when well-formed, `null` otherwise (the caller answers 401 `unauthorized`, docs/api-contract.md
 *   §5.4).
 */
export function parseApiKey(raw: string): { isTest: boolean } | null {
  const match = KEY_PATTERN.exec(raw);
  if (!match) return null;
  const head = `msp_${match[1]}_`;
  if (checksum(head + match[2]) !== match[3]) return null;
  return { isTest: match[1] === "test" };
}
