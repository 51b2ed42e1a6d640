import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

// Ranges no webhook may reach (docs/architecture.md, "Webhooks and the outbox"): private, shared (CGNAT), link-local
// (cloud metadata 169.254.169.254), "this network", documentation/benchmark, multicast and reserved. Loopback is
// handled apart: a test setting allows it.
const BLOCKED_V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const BLOCKED_V6: ReadonlyArray<[string, number]> = [
  ["::", 128],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];

const blocked = new BlockList();
for (const [network, prefix] of BLOCKED_V4) blocked.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of BLOCKED_V6) blocked.addSubnet(network, prefix, "ipv6");
const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

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

/** Parses an IPv6 text (with `::`, a zone id or a trailing dotted quad) into 16 bytes; null when malformed. */
function ipv6Bytes(text: string): number[] | null {
  let address = text.split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted?.[1]) {
    const parts = dotted[1].split(".").map(Number);
    if (parts.some((part) => part > 255)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = parts;
    address = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const bytes: number[] = [];
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    const value = Number.parseInt(group, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  return bytes;
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that route to it: IPv4-mapped `::ffff:a.b.c.d` (also
 * written `::ffff:7f00:1`), IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`.
 */
function embeddedIPv4(bytes: number[]): string | null {
  const dotted = (offset: number) => bytes.slice(offset, offset + 4).join(".");
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return dotted(12);
  if (zeros(0, 12)) return dotted(12);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    if (zeros(4, 12)) return dotted(12);
    if (bytes[4] === 0x00 && bytes[5] === 0x01) return dotted(12);
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return dotted(2);
  return null;
}

/**
 * Decides whether a webhook may connect to `address` (an IP literal, v4 or v6). Refused: loopback (127.0.0.0/8, ::1)
 * unless `allowLoopback`, private (10/8, 172.16/12, 192.168/16), shared 100.64/10, link-local 169.254/16 (cloud
 * metadata) and fe80::/10, unique-local fc00::/7, 0.0.0.0/8, ::, multicast, reserved and documentation ranges, and
 * every IPv6 form that embeds one of those IPv4 addresses (::ffff:127.0.0.1, NAT64, 6to4).
 * @returns null when allowed, else the reason in words.
 */
export function blockedReason(address: string, options: { allowLoopback: boolean }): string | null {
  const family = isIP(address.split("%")[0] ?? "");
  if (family === 4) {
    if (loopback.check(address, "ipv4")) return options.allowLoopback ? null : "a loopback address";
    return blocked.check(address, "ipv4") ? "a private or reserved address" : null;
  }
  if (family !== 6) return "not an IP address";
  const bytes = ipv6Bytes(address);
  if (!bytes) return "not an IP address";
  const v4 = embeddedIPv4(bytes);
  // ::1 sits inside the IPv4-compatible range; judge it as the IPv6 loopback it is.
  if (v4 && v4 !== "0.0.0.1") return blockedReason(v4, options);
  const canonical = bytes
    .reduce<string[]>((groups, byte, index) => {
      if (index % 2 === 0) groups.push(((byte << 8) | (bytes[index + 1] ?? 0)).toString(16));
      return groups;
    }, [])
    .join(":");
  if (loopback.check(canonical, "ipv6")) return options.allowLoopback ? null : "a loopback address";
  return blocked.check(canonical, "ipv6") ? "a private or reserved address" : null;
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
