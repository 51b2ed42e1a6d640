// Test helpers for the settings: organisations with a member of each role, signed in through better-auth as a browser
// would be (its session cookie), and the settings router called as that member.
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import { prisma } from "../../server/db/transaction";
import { authFor } from "../../server/identity/better-auth";
import type { Role } from "../../server/identity/roles";
import type { SettingsRequest } from "../../server/identity/session";
import { createMemberUser } from "../../server/identity/team/operator";
import { CLIENT_ADDRESS_HEADER } from "../../server/platform/client-address";
import { ensureOrganisation } from "../../server/platform/organisations";
import { createSettingsCaller } from "../../server/settings/router";
import { TEST_ORG_LIMITS } from "./api";

/** The public origin the tests act on (a better-auth instance per origin). */
export const TEST_ORIGIN = "http://localhost:3000";

/** The `Cookie` header for the cookies a better-auth answer set. */
export function cookieHeader(headers: Headers, previous = ""): string {
  const jar = new Map(
    previous
      .split(";")
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => [part.slice(0, part.indexOf("=")), part.slice(part.indexOf("=") + 1)] as const),
  );
  for (const line of headers.getSetCookie()) {
    const [pair = ""] = line.split(";");
    const name = pair.slice(0, pair.indexOf("="));
    const value = pair.slice(pair.indexOf("=") + 1);
    if (/max-age=0/i.test(line) || value === "") jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
}

/** A client address of its own for each browser, so the per-address sign-in limit counts each test apart. */
export function randomAddress(): string {
  const byte = () => Math.floor(Math.random() * 256);
  return `198.${18 + (byte() % 2)}.${byte()}.${byte()}`;
}

/** A settings request from a browser at `ip` carrying `cookie`. */
export function browserRequest(cookie = "", ip = randomAddress()): SettingsRequest {
  const headers = new Headers({ "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36" });
  if (cookie) headers.set("cookie", cookie);
  headers.set(CLIENT_ADDRESS_HEADER, ip);
  return { origin: TEST_ORIGIN, headers, ip, userAgent: headers.get("user-agent") };
}

/** Signs in with email and password as a browser; returns its request with the session cookie. */
export async function signIn(email: string, password: string, ip = randomAddress()): Promise<SettingsRequest> {
  const request = browserRequest("", ip);
  const { headers } = await authFor(TEST_ORIGIN).api.signInEmail({
    headers: request.headers,
    body: { email, password },
    returnHeaders: true,
  });
  return browserRequest(cookieHeader(headers), ip);
}

/** A member signed in: who they are, their request and a settings caller acting as them. */
export interface TestMember {
  email: string;
  password: string;
  userId: string;
  role: Role;
  request: SettingsRequest;
  caller: ReturnType<typeof createSettingsCaller>;
}

/** Creates a user with `role` in the organisation and signs them in. */
export async function addMember(orgId: string, role: Role, prefix: string = role): Promise<TestMember> {
  const email = `${prefix}-${randomBytes(5).toString("hex")}@example.com`;
  const password = `pw-${randomBytes(9).toString("base64url")}`;
  const { userId } = await createMemberUser(TEST_ORIGIN, orgId, { email, password, role, name: `${role} person` });
  const request = await signIn(email, password);
  return { email, password, userId, role, request, caller: createSettingsCaller({ request }) };
}

/** A fresh organisation (high API limits) with one signed-in member of each role. */
export async function orgWithRoles(): Promise<{ orgId: string; slug: string; members: Record<Role, TestMember> }> {
  const slug = `team-${randomBytes(5).toString("hex")}`;
  const org = await ensureOrganisation(slug, { limits: TEST_ORG_LIMITS });
  const owner = await addMember(org.id, "owner");
  const [admin, developer, viewer] = await Promise.all([
    addMember(org.id, "admin"),
    addMember(org.id, "developer"),
    addMember(org.id, "viewer"),
  ]);
  return { orgId: org.id, slug, members: { owner, admin, developer, viewer } };
}

/** The member id (`Member.id`) of a user in an organisation. */
export async function memberIdOf(orgId: string, userId: string): Promise<string> {
  return (await prisma().member.findFirstOrThrow({ where: { orgId, userId }, select: { id: true } })).id;
}

/**
 * Gives a user a passkey as a registration would leave it (its key material is never used: no test signs in with it
 * outside a browser, whose virtual authenticator makes real ones in e2e/security.spec.ts).
 */
export async function addPasskeyRow(userId: string): Promise<void> {
  await prisma().passkey.create({
    data: {
      id: `pk_${randomBytes(8).toString("hex")}`,
      name: "Test passkey",
      publicKey: randomBytes(32).toString("base64"),
      userId,
      credentialID: randomBytes(16).toString("base64url"),
      counter: 0,
      deviceType: "singleDevice",
      backedUp: false,
    },
  });
}

/**
 * Lets a user's authenticator accept the current code again, as if the next 30-second window had come: each code is
 * accepted once, and tests that use several codes in a row would otherwise wait for the app's next one.
 */
export async function nextCodeWindow(userId: string): Promise<void> {
  await prisma().twoFactor.updateMany({ where: { userId }, data: { lastAcceptedStep: null } });
}

/** The tRPC error a settings call is refused with; fails the test when it is not refused (or throws something else). */
export async function refusal(promise: Promise<unknown>): Promise<TRPCError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

/** Makes a member's session look signed in (and last confirmed) `minutes` ago, as if 15 minutes of step-up had passed. */
export async function ageSession(member: Pick<TestMember, "request">, minutes: number): Promise<void> {
  const session = await authFor(TEST_ORIGIN).api.getSession({ headers: member.request.headers });
  const at = new Date(Date.now() - minutes * 60_000);
  await prisma().session.update({
    where: { id: session?.session.id as string },
    data: { createdAt: at, reauthenticatedAt: at },
  });
}
