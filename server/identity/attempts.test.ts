// What client address a password or code attempt counts under (docs/api-contract.md §5.10).
import { describe, expect, it } from "vitest";
import { attemptAddress } from "./attempts";

describe("attemptAddress", () => {
  it("keeps IPv4 addresses, and maps IPv4-mapped IPv6 ones to IPv4", () => {
    expect(attemptAddress("203.0.113.7")).toBe("203.0.113.7");
    expect(attemptAddress("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("counts an IPv6 address as its /64, however it is written", () => {
    expect(attemptAddress("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(attemptAddress("2001:0DB8:0001:0002::1")).toBe("2001:db8:1:2::/64");
    expect(attemptAddress("::1")).toBe("::/64");
  });

  it("keeps other text, cut at 64 characters", () => {
    expect(attemptAddress("unknown")).toBe("unknown");
    expect(attemptAddress("x".repeat(100))).toHaveLength(64);
  });
});
