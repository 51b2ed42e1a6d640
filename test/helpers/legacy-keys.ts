// API keys of the first format (docs/api-contract.md §5.2), as the service issued them before keyed checksums: 30
// random base62 characters and a CRC32 of everything before it, 6 base62 characters. The service no longer makes
// them; tests and the benchmark make them to show that such keys keep working, and that a forged one costs nothing.
import { randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function toBase62(value: number, width: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** A raw first-format key with a valid CRC32: what the first generator made (and what anyone can compute). */
export function legacyApiKey(isTest = false): string {
  const head = isTest ? "msp_test_" : "msp_live_";
  let secret = "";
  for (let i = 0; i < 30; i++) secret += BASE62[randomInt(62)];
  return `${head}${secret}${toBase62(crc32(head + secret), 6)}`;
}
