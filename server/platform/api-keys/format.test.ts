import { createSecretKey, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { legacyApiKey } from "../../../test/helpers/legacy-keys";
import { generateApiKey, hashApiKey, parseApiKey } from "./format";

const SECRET = createSecretKey(randomBytes(32));
const otherSecret = () => createSecretKey(randomBytes(32));

// The key format checked before any lookup: docs/architecture.md, "API keys and the key cache".
describe("API key format (docs/api-contract.md §5.2)", () => {
  it("generates live and test keys that parse, with a SHA-256 hash and a short prefix", () => {
    const live = generateApiKey(false, SECRET);
    const test = generateApiKey(true, SECRET);
    expect(live.raw).toMatch(/^msp_live_[0-9A-Za-z]{40}$/);
    expect(test.raw).toMatch(/^msp_test_[0-9A-Za-z]{40}$/);
    expect(parseApiKey(live.raw, SECRET)).toEqual({ isTest: false, legacy: false });
    expect(parseApiKey(test.raw, SECRET)).toEqual({ isTest: true, legacy: false });
    expect(live.hash).toBe(hashApiKey(live.raw));
    expect(live.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(live.prefix).toBe(live.raw.slice(0, 13));
    expect(generateApiKey(false, SECRET).raw).not.toBe(live.raw);
  });

  it("refuses keys whose checksum, prefix or length is wrong", () => {
    const { raw } = generateApiKey(false, SECRET);
    const flipped = raw.slice(0, 20) + (raw[20] === "a" ? "b" : "a") + raw.slice(21);
    expect(parseApiKey(flipped, SECRET)).toBeNull();
    expect(parseApiKey(raw.replace("msp_live_", "msp_test_"), SECRET)).toBeNull();
    expect(parseApiKey(raw.slice(0, -1), SECRET)).toBeNull();
    expect(parseApiKey(`${raw}x`, SECRET)).toBeNull();
    expect(parseApiKey("", SECRET)).toBeNull();
  });

  it("a key is valid only under the secret it was made with: no one without the secret can compute its checksum", () => {
    const { raw } = generateApiKey(false, SECRET);
    expect(parseApiKey(raw, otherSecret())).toBeNull();
    // A key shaped like the current format with a checksum computed the first format's way (CRC32) is refused.
    const forged = legacyApiKey(false);
    expect(parseApiKey(`${forged.slice(0, 9)}AB${forged.slice(9)}xy`, SECRET)).toBeNull();
    // Over 10,000 random checksums none passes (each passes with probability 62^-8).
    const body = raw.slice(0, -8);
    let passed = 0;
    for (let i = 0; i < 10_000; i++) {
      if (parseApiKey(body + randomBytes(6).toString("base64url").replace(/[-_]/g, "0").slice(0, 8), SECRET)) passed++;
    }
    expect(passed).toBe(0);
  });

  it("recognises the first format (30 characters and a CRC32) as legacy, under any secret", () => {
    const live = legacyApiKey(false);
    const test = legacyApiKey(true);
    expect(parseApiKey(live, SECRET)).toEqual({ isTest: false, legacy: true });
    expect(parseApiKey(test, otherSecret())).toEqual({ isTest: true, legacy: true });
    const flipped = live.slice(0, 20) + (live[20] === "a" ? "b" : "a") + live.slice(21);
    expect(parseApiKey(flipped, SECRET)).toBeNull();
    expect(parseApiKey(live.replace("msp_live_", "msp_test_"), SECRET)).toBeNull();
  });
});
