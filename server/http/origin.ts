// Who is calling and which origin they called (docs/architecture.md, "The REST facade"): the client address the rate
// limits and the audit log count, and the public origin that `docsUrl`, the OpenAPI `servers`, the Postman `baseUrl`
// and the banner show. Forwarding headers are believed only as far as `TRUST_PROXY` says; by default the socket is the
// truth.
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import { env, type TrustProxy } from "../env";
import { CLIENT_ADDRESS_HEADER, canonicalAddress } from "../platform/client-address";

/** Reads one request header by lower-case name; repeated headers joined with ", ". */
export type HeaderReader = (name: string) => string | undefined;

// A host name or an IP literal with an optional port: anything else in Host is refused (no header injection into
// links we print).
const HOST_PATTERN =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

// An entry of `X-Forwarded-For` with a port: `203.0.113.7:4711` (Azure Application Gateway) or `[2001:db8::7]:4711`; a
// bracketed IPv6 address may also come without one.
const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/**
 * The address in one `X-Forwarded-For` entry, as proxies write it: a bare IP literal (nginx's
 * `$proxy_add_x_forwarded_for`, AWS ALB, Cloudflare), an IPv4 address with a port (Azure Application Gateway:
 * `203.0.113.7:4711`) or a bracketed IPv6 address with or without one (`[2001:db8::7]:4711`).
 * @returns the address as {@link canonicalAddress} writes it, or null when the entry is none of these (`unknown`, an
 *   obfuscated identifier, a host name, garbage).
 */
export function forwardedAddress(entry: string | undefined): string | null {
  const text = entry?.trim() ?? "";
  const bracketed = BRACKETED_IPV6.exec(text);
  if (bracketed) return isIP(bracketed[1] as string) === 6 ? canonicalAddress(bracketed[1]) : null;
  return canonicalAddress(IPV4_WITH_PORT.exec(text)?.[1] ?? text);
}

function listHeader(read: HeaderReader, name: string): string[] {
  return (read(name) ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

/**
 * The client's address under the trusted-proxy setting (`TRUST_PROXY`, server/env.ts; docs/architecture.md, "The REST
 * facade"):
 * - `0` (default): the socket's peer address; `X-Forwarded-For` is ignored, so a client cannot pick its address.
 * - `n` hops: the address `n` steps back along `X-Forwarded-For` from the socket (the entry the n-th trusted proxy
 *   appended); when the header has fewer entries, its first (the proxy that wrote it saw the client). Entries are
 *   read with {@link forwardedAddress} (ports allowed). An entry that is no address (`unknown`) stands for the hop that
 *   wrote it: the entry one step closer to the socket, and so on down to the socket. Never an entry further from the
 *   socket, which the client may have written.
 * - `vercel`: `X-Vercel-Forwarded-For` (set by Vercel's edge, not by the client), else the socket.
 * @param socketAddress the TCP peer; null where the platform gives none (serverless route handlers).
 * @returns the address as {@link canonicalAddress} writes it, or null when none is known.
 */
export function clientAddress(read: HeaderReader, socketAddress: string | null, trust: TrustProxy = env().TRUST_PROXY) {
  if (trust === "vercel")
    return forwardedAddress(listHeader(read, "x-vercel-forwarded-for")[0]) ?? canonicalAddress(socketAddress);
  const chain = [
    canonicalAddress(socketAddress),
    ...listHeader(read, "x-forwarded-for").reverse().map(forwardedAddress),
  ];
  // chain[i] was appended by the proxy at chain[i - 1]; chain[0] to chain[trust - 1] are the trusted proxies.
  for (let index = Math.min(trust, chain.length - 1); index >= 0; index--) {
    const address = chain[index];
    if (address) return address;
  }
  return null;
}

/**
 * Writes a page request's client address ({@link clientAddress} of its headers and socket) into
 * {@link CLIENT_ADDRESS_HEADER}, which `npm start` (scripts/serve.ts) hands to the pages: the settings' sessions,
 * audit trail and sign-in attempt limits (server/identity/attempts.ts) count it. A value the client sent in that
 * header itself is replaced, or removed when no address is known.
 * @param headers node:http's request headers, changed in place.
 */
export function stampClientAddress(headers: IncomingHttpHeaders, socketAddress: string | null): void {
  const address = clientAddress((name) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }, socketAddress);
  if (address) headers[CLIENT_ADDRESS_HEADER] = address;
  else delete headers[CLIENT_ADDRESS_HEADER];
}

/**
 * The public origin of a request (`https://crm.example.com`, no trailing slash): `PUBLIC_URL` when set; else the
 * `Host` the client sent (or, behind a trusted proxy, `X-Forwarded-Host` and `X-Forwarded-Proto`); a malformed host
 * falls back to `http://localhost:<PORT>`.
 * @param encrypted whether the request itself arrived over TLS.
 */
export function publicOrigin(read: HeaderReader, encrypted = false, trust: TrustProxy = env().TRUST_PROXY): string {
  const configured = env().PUBLIC_URL;
  if (configured) return configured.replace(/\/+$/, "");
  const proxied = trust !== 0;
  const host = (proxied && listHeader(read, "x-forwarded-host")[0]) || read("host")?.trim();
  const forwardedProto = proxied ? listHeader(read, "x-forwarded-proto")[0]?.toLowerCase() : undefined;
  const protocol =
    forwardedProto === "https" || forwardedProto === "http" ? forwardedProto : encrypted ? "https" : "http";
  // A DNS name is at most 253 characters (plus a port): a longer Host would make the links we print unbounded.
  if (!host || host.length > 259 || !HOST_PATTERN.test(host)) return `http://localhost:${env().PORT}`;
  return `${protocol}://${host.toLowerCase()}`;
}
