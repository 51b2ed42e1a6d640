import { describe, expect, it } from "vitest";
import { clientAddress, forwardedAddress } from "./origin";

/** A header reader over a plain object (lower-case names). */
function headers(values: Record<string, string>) {
  return (name: string) => values[name];
}

/** The client address of a request whose `X-Forwarded-For` is `forwardedFor`, from `socket`, trusting `trust` hops. */
function behind(trust: number, forwardedFor: string, socket: string | null = "10.0.0.2") {
  return clientAddress(headers({ "x-forwarded-for": forwardedFor }), socket, trust);
}

describe("X-Forwarded-For entries as proxies write them", () => {
  it("reads bare addresses, IPv4 with a port and bracketed IPv6 with or without one", () => {
    expect(forwardedAddress("203.0.113.7")).toBe("203.0.113.7");
    expect(forwardedAddress("203.0.113.7:4711")).toBe("203.0.113.7");
    expect(forwardedAddress(" 2001:DB8::7 ")).toBe("2001:db8::7");
    expect(forwardedAddress("[2001:db8::7]:4711")).toBe("2001:db8::7");
    expect(forwardedAddress("[2001:db8::7]")).toBe("2001:db8::7");
    expect(forwardedAddress("[::ffff:203.0.113.7]:443")).toBe("203.0.113.7");
  });

  it("is null for what is no address", () => {
    for (const entry of [
      "unknown",
      "_hidden",
      "proxy.example.com",
      "[203.0.113.7]:80",
      "203.0.113.7:",
      "999.1.1.1:80",
      "",
    ])
      expect(forwardedAddress(entry), entry).toBeNull();
    expect(forwardedAddress(undefined)).toBeNull();
  });
});

describe('the client address under TRUST_PROXY (docs/architecture.md, "The REST facade")', () => {
  it("trusts no header by default", () => {
    expect(behind(0, "198.51.100.20")).toBe("10.0.0.2");
  });

  it("nginx ($proxy_add_x_forwarded_for, one hop): the entry it appended, not the client's own", () => {
    expect(behind(1, "203.0.113.66, 198.51.100.20")).toBe("198.51.100.20");
    expect(behind(1, "198.51.100.20")).toBe("198.51.100.20");
    expect(behind(1, "2001:db8::66, 2001:db8::20")).toBe("2001:db8::20");
  });

  it("AWS ALB (append mode, one hop): bare IPv4 and IPv6", () => {
    expect(behind(1, "203.0.113.66,198.51.100.20")).toBe("198.51.100.20");
    expect(behind(1, "2001:db8:85a3::8a2e:370:7334")).toBe("2001:db8:85a3::8a2e:370:7334");
  });

  it("Cloudflare in front of nginx (two hops): the visitor address Cloudflare appended", () => {
    // The client wrote 203.0.113.66; Cloudflare appended the visitor 198.51.100.20; nginx appended Cloudflare's edge.
    expect(behind(2, "203.0.113.66, 198.51.100.20, 172.68.1.1")).toBe("198.51.100.20");
    expect(behind(2, "2001:db8::66, 2001:db8::20, 2400:cb00::1")).toBe("2001:db8::20");
  });

  it("Azure Application Gateway (one hop): IPv4 with its port and bracketed IPv6 with its port", () => {
    expect(behind(1, "203.0.113.66, 198.51.100.20:52814")).toBe("198.51.100.20");
    expect(behind(1, "203.0.113.66:1, [2001:db8::20]:52814")).toBe("2001:db8::20");
  });

  it("an entry that is no address stands for the hop that wrote it, never for a client-written entry", () => {
    // The trusted proxy (the socket) wrote `unknown` (Squid's forwarded_for unknown): the address is the proxy's own.
    expect(behind(1, "203.0.113.66, unknown")).toBe("10.0.0.2");
    expect(behind(1, "203.0.113.66, garbage:port")).toBe("10.0.0.2");
    // Two hops: the inner proxy (the entry nearest the socket) wrote what it could not read; that proxy's address.
    expect(behind(2, "203.0.113.66, unknown, 172.16.0.9")).toBe("172.16.0.9");
    // The first trusted entry is fine even when a trusted hop's own entry is not: it was written by a trusted proxy.
    expect(behind(2, "203.0.113.66, 198.51.100.20, unknown")).toBe("198.51.100.20");
  });

  it("with fewer entries than trusted hops, the first entry (written by the proxy that saw the client)", () => {
    expect(behind(3, "198.51.100.20, 172.16.0.9")).toBe("198.51.100.20");
    expect(behind(3, "unknown, 172.16.0.9")).toBe("172.16.0.9");
    expect(behind(2, "")).toBe("10.0.0.2");
  });

  it("null when neither the headers nor the socket give an address (a serverless handler)", () => {
    expect(behind(1, "203.0.113.66, unknown", null)).toBeNull();
  });

  it("vercel: the first entry of X-Vercel-Forwarded-For, else the socket", () => {
    const read = headers({ "x-vercel-forwarded-for": "198.51.100.20", "x-forwarded-for": "203.0.113.66" });
    expect(clientAddress(read, null, "vercel")).toBe("198.51.100.20");
    expect(clientAddress(headers({ "x-vercel-forwarded-for": "unknown" }), "10.0.0.2", "vercel")).toBe("10.0.0.2");
  });
});
