import { isIP, SocketAddress } from "node:net";
import { env } from "../env";

/**
 * Header `npm start` sets on every page request to the client address under `TRUST_PROXY` (scripts/serve.ts). Its own
 * module, so the server reads it without importing better-auth; everything imports it from here.
 */
export const CLIENT_ADDRESS_HEADER = "x-crm-client-address";

/**
 * A client address as the service records and shows it (docs/architecture.md, "The REST facade"): IPv6 in its RFC 5952
 * text (`0000:…:0001` and `0:0:0:0:0:0:0:1` are both `::1`, lower case, no zone), an IPv4-mapped IPv6 address as its
 * IPv4 (`::ffff:10.0.0.1` is `10.0.0.1`), IPv4 as it is.
 * @returns the address, or null when `address` is not an IP literal.
 */
export function canonicalAddress(address: string | null | undefined): string | null {
  const text = address?.trim() ?? "";
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6) return null;
  // An IPv4 peer of a dual-stack listener arrives in this form on every request: answered without parsing the address
  // into a native object, which is what the general form below costs.
  if (text.startsWith("::ffff:") && isIP(text.slice(7)) === 4) return text.slice(7);
  const compact = new SocketAddress({ address: text, family: "ipv6" }).address;
  return compact.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
}

/** The client address of a better-auth call: `TRUST_PROXY`'s header (on Vercel, Vercel's own), in its canonical text. */
export function clientAddressOf(headers: Headers | undefined | null): string | null {
  const header = env().TRUST_PROXY === "vercel" ? "x-vercel-forwarded-for" : CLIENT_ADDRESS_HEADER;
  return canonicalAddress(headers?.get(header)?.split(",")[0]);
}
