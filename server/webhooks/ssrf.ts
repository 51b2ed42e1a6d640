import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

// What a webhook may reach (docs/architecture.md, "Webhooks and the outbox"), checked against IANA's IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890) by test/integration/webhooks/webhooks-ssrf.test.ts. Every block of both
// registries is refused, the few the registries mark globally reachable included (anycast protocol services, AS112
// sinkholes, AMT relays, ORCHID and drone identifiers): none of them is a webhook receiver. Two IPv6 forms carry an IPv4
// address and are judged by it instead: IPv4-mapped `::ffff:0:0/96` (how a dual-stack socket shows an IPv4 peer) and
// the NAT64 prefix `64:ff9b::/96` (a DNS64 resolver's answer for an IPv4-only receiver). Loopback is handled apart: a
// test setting allows it.
const BLOCKED_V4 = [
  "0.0.0.0/8", // "this network" (0.0.0.0/32 within)
  "10.0.0.0/8", // private use
  "100.64.0.0/10", // shared address space (CGNAT)
  "169.254.0.0/16", // link local (cloud metadata 169.254.169.254)
  "172.16.0.0/12", // private use
  "192.0.0.0/24", // IETF protocol assignments (service continuity, dummy, PCP and TURN anycast, NAT64 discovery)
  "192.0.2.0/24", // documentation
  "192.31.196.0/24", // AS112-v4
  "192.52.193.0/24", // AMT
  "192.88.99.0/24", // deprecated 6to4 relay anycast, 6a44 relay
  "192.168.0.0/16", // private use
  "192.175.48.0/24", // direct delegation AS112
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast (a registry of its own)
  "240.0.0.0/4", // reserved, limited broadcast 255.255.255.255 within
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));
// Only global unicast (2000::/3) is reachable: that refuses, outside it, the unspecified and IPv4-compatible `::/96`,
// IPv4-translated `::ffff:0:0:0/96` (SIIT), `64:ff9b:1::/48`, discard-only and dummy `100::/64`, `100:0:0:1::/64`,
// SRv6 `5f00::/16`, unique-local `fc00::/7`, link-local `fe80::/10`, site-local `fec0::/10` and multicast `ff00::/8`.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");
const BLOCKED_V6 = [
  "2001::/23", // IETF protocol assignments: Teredo 2001::/32, benchmarking, AMT, AS112-v6, ORCHID, DETs, anycast
  "2001:db8::/32", // documentation
  "2002::/16", // 6to4
  "2620:4f:8000::/48", // direct delegation AS112
  "3fff::/20", // documentation
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));
const NAT64_V6 = ipaddr.IPv6.parseCIDR("64:ff9b::/96");
const LOOPBACK_V4 = ipaddr.IPv4.parseCIDR("127.0.0.0/8");

/**
 * Why a webhook request was refused before any byte was sent (SSRF filter, docs/architecture.md,
 * "Webhooks and the outbox").
 */
export class BlockedAddressError extends Error {
  readonly address: string;
  constructor(address: string, reason: string) {
    super(`refused: ${address} is ${reason}`);
    this.name = "BlockedAddressError";
    this.address = address;
  }
}

/**
 * Decides whether a webhook may connect to `address` (an IP literal, v4 or v6, an IPv6 zone id allowed). Refused:
 * loopback (127.0.0.0/8, ::1) unless `allowLoopback`; every block of IANA's special-purpose registries and multicast;
 * every IPv6 address outside global unicast 2000::/3 and, within it, Teredo, 6to4 and the rest of the registry's
 * blocks; IPv4-mapped and NAT64 addresses as the IPv4 address they carry (NAT64 to loopback stays refused: it is the
 * gateway's, not ours).
 * @returns null when allowed, else the reason in words ("a loopback address", "a private or reserved address").
 */
export function blockedReason(address: string, options: { allowLoopback: boolean }): string | null {
  const bare = address.split("%")[0] ?? "";
  const family = isIP(bare);
  if (family === 0) return "not an IP address";
  if (family === 4) {
    const v4 = ipaddr.IPv4.parse(bare);
    if (v4.match(LOOPBACK_V4)) return options.allowLoopback ? null : "a loopback address";
    return BLOCKED_V4.some((block) => v4.match(block)) ? "a private or reserved address" : null;
  }
  const v6 = ipaddr.IPv6.parse(bare);
  if (v6.isIPv4MappedAddress()) return blockedReason(v6.toIPv4Address().toString(), options);
  if (v6.match(NAT64_V6)) return blockedReason(v6.toByteArray().slice(12).join("."), { allowLoopback: false });
  if (v6.range() === "loopback") return options.allowLoopback ? null : "a loopback address";
  if (!v6.match(GLOBAL_UNICAST_V6) || BLOCKED_V6.some((block) => v6.match(block)))
    return "a private or reserved address";
  return null;
}

/**
 * A `lookup` for `http.request` that resolves the host name, refuses it when ANY of its addresses is blocked (so a
 * name with one public and one private record cannot be used to reach the private one), and hands Node only checked
 * addresses: the connection is pinned to what was checked, which defeats DNS rebinding between check and connect.
 */
export function guardedLookup(options: { allowLoopback: boolean }): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    const all: LookupAllOptions = { ...lookupOptions, all: true };
    dnsLookup(hostname, all, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), "", 0);
      for (const entry of addresses) {
        const reason = blockedReason(entry.address, options);
        if (reason) return callback(new BlockedAddressError(`${hostname} (${entry.address})`, reason), "", 0);
      }
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}
