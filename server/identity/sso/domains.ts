// An organisation's single sign-on domains and their DNS verification (docs/api-contract.md §11.2): a domain counts
// only once a TXT record proves the organisation controls it, and is verified for one organisation at a time.
import { randomBytes } from "node:crypto";
import { Resolver } from "node:dns/promises";
import { prisma, transaction } from "../../db/transaction";
import { env } from "../../env";
import { ApiError } from "../../errors";

/** The TXT record's name for `domain`: `_msp-crm-verification.<domain>`. */
export function txtRecordName(domain: string): string {
  return `_msp-crm-verification.${domain}`;
}

/** The TXT record's value for a token: `msp-crm-verification=<token>`. */
export function txtRecordValue(token: string): string {
  return `msp-crm-verification=${token}`;
}

/** Looks up the TXT records of a name: each record's strings joined, as DNS splits long ones. */
export type TxtResolver = (name: string) => Promise<string[]>;

function systemResolver(): TxtResolver {
  const servers = env().SSO_DNS_SERVERS;
  const resolver = new Resolver({ timeout: 3_000, tries: 2 });
  if (servers.length > 0) resolver.setServers(servers);
  return async (name) => (await resolver.resolveTxt(name)).map((chunks) => chunks.join(""));
}

const holder = globalThis as unknown as { __crmTxtResolver?: TxtResolver };

/**
 * Replaces how TXT records are looked up (tests answer from a table; `null` goes back to DNS: the system's resolvers,
 * or `SSO_DNS_SERVERS`).
 */
export function setTxtResolver(resolver: TxtResolver | null): void {
  holder.__crmTxtResolver = resolver ?? undefined;
}

function resolveTxt(name: string): Promise<string[]> {
  return (holder.__crmTxtResolver ?? systemResolver())(name);
}

/** A domain as the SSO page shows it, with the record to publish. */
export interface SsoDomainView {
  domain: string;
  verified: boolean;
  verifiedAt: Date | null;
  lastCheckedAt: Date | null;
  lastError: string | null;
  txtName: string;
  txtValue: string;
}

/** Most domains one organisation lists. */
export const SSO_DOMAINS_MAX = 20;

const DOMAIN_PATTERN = /^(?=.{4,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*\.[a-z]{2,63}$/;

/**
 * A domain as typed, normalised: lower-case, without a trailing dot or an `@`/`*.` before it.
 * @throws ApiError `validation_error` (422) for something that is not a DNS name with a top-level domain.
 */
export function normaliseDomain(input: string): string {
  const domain = input
    .trim()
    .toLowerCase()
    .replace(/^@|^\*\./, "")
    .replace(/\.$/, "");
  if (!DOMAIN_PATTERN.test(domain)) {
    throw new ApiError("validation_error", "Enter a domain such as example.com", {
      details: [{ path: ["domain"], message: "must be a domain name such as example.com" }],
    });
  }
  return domain;
}

function toView(row: {
  domain: string;
  token: string;
  verifiedAt: Date | null;
  lastCheckedAt: Date | null;
  lastError: string | null;
}): SsoDomainView {
  return {
    domain: row.domain,
    verified: row.verifiedAt !== null,
    verifiedAt: row.verifiedAt,
    lastCheckedAt: row.lastCheckedAt,
    lastError: row.lastError,
    txtName: txtRecordName(row.domain),
    txtValue: txtRecordValue(row.token),
  };
}

/** The organisation's domains, verified first then by name. */
export async function listSsoDomains(orgId: string): Promise<SsoDomainView[]> {
  const rows = await prisma().ssoDomain.findMany({ where: { orgId }, orderBy: { domain: "asc" } });
  return rows.map(toView).sort((a, b) => Number(b.verified) - Number(a.verified));
}

/**
 * Keeps the provider's routing in step with the verified domains: the plugin's `domain` lists them (comma-separated)
 * and `domainVerified` says whether there is one, without which the plugin starts no sign-in.
 */
export async function syncProviderDomains(orgId: string): Promise<void> {
  const verified = await prisma().ssoDomain.findMany({
    where: { orgId, verifiedAt: { not: null } },
    select: { domain: true },
    orderBy: { domain: "asc" },
  });
  await prisma().ssoProvider.updateMany({
    where: { orgId },
    data: {
      domain: verified.length > 0 ? verified.map((row) => row.domain).join(",") : "unverified.invalid",
      domainVerified: verified.length > 0,
    },
  });
}

/**
 * Adds a domain to verify (idempotent: the same domain again returns its record).
 * @throws ApiError `validation_error` (422) for a malformed domain or past {@link SSO_DOMAINS_MAX}; `conflict` (409)
 *         when another organisation has verified it.
 */
export async function addSsoDomain(orgId: string, input: string): Promise<SsoDomainView> {
  const domain = normaliseDomain(input);
  const existing = await prisma().ssoDomain.findUnique({ where: { orgId_domain: { orgId, domain } } });
  if (existing) return toView(existing);
  if ((await prisma().ssoDomain.count({ where: { orgId } })) >= SSO_DOMAINS_MAX) {
    throw new ApiError("validation_error", `An organisation lists at most ${SSO_DOMAINS_MAX} domains`);
  }
  if (await prisma().ssoDomain.count({ where: { domain, verifiedAt: { not: null }, orgId: { not: orgId } } })) {
    throw new ApiError("conflict", `${domain} is verified by another organisation`);
  }
  const row = await prisma().ssoDomain.create({
    data: { orgId, domain, token: randomBytes(18).toString("base64url") },
  });
  return toView(row);
}

/**
 * Looks the domain's TXT record up and records what was found. Verified when one of its TXT records is exactly the
 * expected value; taken by no other organisation at that moment (checked under a lock on the domain's name).
 * @returns the domain as it now stands (`verified`, or `lastError` in words).
 * @throws ApiError `not_found` (404) for a domain the organisation does not list.
 */
export async function verifySsoDomain(orgId: string, input: string): Promise<SsoDomainView> {
  const domain = normaliseDomain(input);
  const row = await prisma().ssoDomain.findUnique({ where: { orgId_domain: { orgId, domain } } });
  if (!row) throw new ApiError("not_found", `${domain} is not one of this organisation's domains`);
  const expected = txtRecordValue(row.token);
  let error: string | null = null;
  try {
    const records = await resolveTxt(txtRecordName(domain));
    if (!records.includes(expected)) {
      error =
        records.length === 0
          ? `No TXT record at ${txtRecordName(domain)} yet`
          : `The TXT record at ${txtRecordName(domain)} does not hold ${expected}`;
    }
  } catch (cause) {
    const code = (cause as { code?: string }).code;
    error =
      code === "ENOTFOUND" || code === "ENODATA"
        ? `No TXT record at ${txtRecordName(domain)} yet`
        : `DNS lookup failed (${code ?? "error"}): try again in a few minutes`;
  }
  const now = new Date();
  return transaction(async () => {
    await prisma().$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`sso-domain:${domain}`}))`;
    if (!error) {
      const taken = await prisma().ssoDomain.count({
        where: { domain, verifiedAt: { not: null }, orgId: { not: orgId } },
      });
      if (taken > 0) error = `${domain} is verified by another organisation`;
    }
    const updated = await prisma().ssoDomain.update({
      where: { id: row.id },
      data: error
        ? { lastCheckedAt: now, lastError: error, verifiedAt: null }
        : { lastCheckedAt: now, lastError: null, verifiedAt: row.verifiedAt ?? now },
    });
    await syncProviderDomains(orgId);
    return toView(updated);
  });
}

/**
 * Removes a domain: its people can no longer sign in through the provider.
 * @throws ApiError `not_found` (404) for a domain the organisation does not list.
 */
export async function removeSsoDomain(orgId: string, input: string): Promise<void> {
  const domain = normaliseDomain(input);
  await transaction(async () => {
    const removed = await prisma().ssoDomain.deleteMany({ where: { orgId, domain } });
    if (removed.count === 0) throw new ApiError("not_found", `${domain} is not one of this organisation's domains`);
    await syncProviderDomains(orgId);
  });
}
