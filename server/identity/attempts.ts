// The one limit on guessing a password or a code (docs/architecture.md, "Settings: sign-in, team and roles";
// docs/api-contract.md §5.10): every better-auth path that checks one (sign-in, the second step of a sign-in,
// step-up, authenticator set-up and removal, backup codes, password change) counts an attempt here first, in the
// key-value store, so the limit holds across instances.
import { hash } from "node:crypto";
import ipaddr from "ipaddr.js";
import { prisma } from "../db/transaction";
import { kv } from "../kv";
import { warnThrottled } from "../kv/warn";

/**
 * Attempts allowed (docs/api-contract.md §5.10):
 * - `perAccountAndAddress` per email from one client address in `windowMs`: the lockout a user can run into, and
 *   that only someone at their address can cause;
 * - `perAddress` from one client address in `windowMs`, whatever the email (credential stuffing from one place);
 * An IPv6 client address counts as its /64 network ({@link attemptAddress}).
 * - `perAccount` per email from all addresses in `accountWindowMs` (guessing spread over many addresses; OWASP ASVS
 *   4.0.3 V2.2.1 asks for at most 100 failed attempts an hour on one account). It does not apply at an address the
 *   user has a live session from, so a stranger who spends it cannot lock the user out where they work.
 */
export const ATTEMPT_LIMITS = {
  perAccountAndAddress: 10,
  perAddress: 50,
  /** 15 minutes, in ms. */
  windowMs: 15 * 60 * 1000,
  perAccount: 100,
  /** 1 hour, in ms. */
  accountWindowMs: 60 * 60 * 1000,
} as const;

/** Who an attempt is for and where it comes from; any part may be unknown (null). */
export interface AttemptSubject {
  /** The email typed, or the signed-in or challenged user's. */
  email: string | null;
  /** The user the email belongs to, when there is one. */
  userId: string | null;
  /** The client address (`TRUST_PROXY`'s header). */
  address: string | null;
}

/** A refused attempt: which limit, and in how many seconds it admits one again. */
export interface AttemptRefusal {
  limit: "account and address" | "address" | "account";
  retryAfterSeconds: number;
  /** What the page and the procedure say: "Too many attempts: wait 12 minutes and try again". */
  message: string;
}

/**
 * The address an attempt is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 one as IPv4), an IPv6
 * address as its /64 network, which one subscriber or host usually holds whole, so rotating through its addresses does
 * not reset the limits; any other text as it is, cut at 64 characters.
 */
export function attemptAddress(address: string): string {
  if (!ipaddr.isValid(address)) return address.slice(0, 64);
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const network = (parsed as ipaddr.IPv6).toNormalizedString().split(":").slice(0, 4).join(":");
  return `${ipaddr.IPv6.parse(`${network}::`).toString()}/64`;
}

function hashed(value: string): string {
  return hash("sha256", value, "hex").slice(0, 32);
}

async function knownAddress(userId: string, address: string): Promise<boolean> {
  const live = await prisma().session.count({
    where: { userId, ipAddress: address, expiresAt: { gt: new Date() } },
  });
  return live > 0;
}

/**
 * Counts one password or code attempt against the limits of {@link ATTEMPT_LIMITS}, in that order, stopping at the
 * first that is full (a refused attempt is not counted in the later ones). An unreachable store admits the attempt
 * (scrypt's cost and better-auth's own two-factor lockout still slow guessing) rather than locking everyone out.
 * @returns null when admitted, else the refusal with its wait in seconds.
 */
export async function countAttempt(subject: AttemptSubject): Promise<AttemptRefusal | null> {
  const email = subject.email?.trim().toLowerCase() || null;
  const address = subject.address ? attemptAddress(subject.address) : null;
  const windows: { limit: AttemptRefusal["limit"]; key: string; max: number; ms: number }[] = [];
  if (email) {
    windows.push({
      limit: "account and address",
      key: `attempts:{p:${hashed(`${email} ${address ?? "?"}`)}}`,
      max: ATTEMPT_LIMITS.perAccountAndAddress,
      ms: ATTEMPT_LIMITS.windowMs,
    });
  }
  if (address) {
    windows.push({
      limit: "address",
      key: `attempts:{a:${address}}`,
      max: ATTEMPT_LIMITS.perAddress,
      ms: ATTEMPT_LIMITS.windowMs,
    });
  }
  if (email && !(subject.userId && subject.address && (await knownAddress(subject.userId, subject.address)))) {
    windows.push({
      limit: "account",
      key: `attempts:{e:${hashed(email)}}`,
      max: ATTEMPT_LIMITS.perAccount,
      ms: ATTEMPT_LIMITS.accountWindowMs,
    });
  }
  try {
    // One call per window: their hash tags and lengths differ, so one script cannot count them together.
    for (const window of windows) {
      const result = await kv().slidingWindow([{ key: window.key, limit: window.max }], window.ms);
      if (result.allowed) continue;
      const freeAt = Math.max(...result.windows.map((state) => state.freeAtMs));
      const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - result.nowMs) / 1000));
      const minutes = Math.ceil(retryAfterSeconds / 60);
      return {
        limit: window.limit,
        retryAfterSeconds,
        message: `Too many attempts: wait ${minutes} minute${minutes === 1 ? "" : "s"} and try again`,
      };
    }
    return null;
  } catch (error) {
    warnThrottled("attempts.store-down", {
      message: "password and code attempt limit store unreachable; attempt admitted",
      error: String(error),
    });
    return null;
  }
}
