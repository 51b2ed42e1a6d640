import { describe, expect, it } from "vitest";
import { generateApiKey, hashApiKey, parseApiKey } from "./api-keys";

// The key format checked before any lookup: docs/architecture.md, "API keys and the key cache".
describe("API key format (docs/api-contract.md §5.2)", () => {
  it("generates live and test keys that parse, with a SHA-256 hash and a short prefix", () => {
    const live = generateApiKey(false);
    const test = generateApiKey(true);
    expect(live.raw).toMatch(/^msp_live_[0-9A-Za-z]{36}$/);
    expect(test.raw).toMatch(/^msp_test_[0-9A-Za-z]{36}$/);
    expect(parseApiKey(live.raw)).toEqual({ isTest: false });
    expect(parseApiKey(test.raw)).toEqual({ isTest: true });
    expect(live.hash).toBe(hashApiKey(live.raw));
    expect(live.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(live.prefix).toBe(live.raw.slice(0, 13));
    expect(generateApiKey(false).raw).not.toBe(live.raw);
  });

  it("refuses keys whose checksum, prefix or length is wrong", () => {
    const { raw } = generateApiKey(false);
    const flipped = raw.slice(0, 20) + (raw[20] === "a" ? "b" : "a") + raw.slice(21);
    expect(parseApiKey(flipped)).toBeNull();
    expect(parseApiKey(raw.replace("msp_live_", "msp_test_"))).toBeNull();
    expect(parseApiKey(raw.slice(0, -1))).toBeNull();
    expect(parseApiKey(`${raw}x`)).toBeNull();
    expect(parseApiKey("")).toBeNull();
  });
});
