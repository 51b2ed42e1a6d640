import { describe, expect, it } from "vitest";
import { canonicalAddress } from "./client-address";

describe('client addresses as recorded and shown (docs/architecture.md, "The REST facade")', () => {
  it("writes IPv6 in its RFC 5952 text, whatever form it came in", () => {
    expect(canonicalAddress("0000:0000:0000:0000:0000:0000:0000:0001")).toBe("::1");
    expect(canonicalAddress("::1")).toBe("::1");
    expect(canonicalAddress("2001:0DB8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    expect(canonicalAddress("fe80::1%eth0")).toBe("fe80::1");
  });

  it("shows an IPv4-mapped address as its IPv4, and IPv4 as it is", () => {
    expect(canonicalAddress("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(canonicalAddress("0000:0000:0000:0000:0000:ffff:0a00:0001")).toBe("10.0.0.1");
    expect(canonicalAddress(" 127.0.0.1 ")).toBe("127.0.0.1");
  });

  it("is null for anything that is not an IP literal", () => {
    expect(canonicalAddress(null)).toBeNull();
    expect(canonicalAddress("")).toBeNull();
    expect(canonicalAddress("unknown")).toBeNull();
    expect(canonicalAddress("example.com")).toBeNull();
  });
});
