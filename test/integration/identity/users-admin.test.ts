// The operator command's users and links (run in this process, test/helpers/admin.ts): `create-user` with a role,
// `invite` printing the link on the public origin, `reset-password` printing a one-time link; each checked by what a
// user can then do (sign in, accept, set a password).
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { resetEnvCache } from "../../../server/env";
import { authFor } from "../../../server/identity/better-auth";
import { resetPassword } from "../../../server/identity/password-reset";
import { acceptInvitationWithNewAccount, getInvitationPage } from "../../../server/identity/team/accept-invitation";
import { admin } from "../../helpers/admin";
import { browserRequest, signIn, TEST_ORIGIN } from "../../helpers/members";

// The links the command prints are on the public origin the test's browser requests use.
process.env.PUBLIC_URL = TEST_ORIGIN;
resetEnvCache();

async function failing(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await admin(...args);
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
  throw new Error(`admin ${args.join(" ")} succeeded`);
}

it("create-user makes the first user the owner, then needs --role; each signs in with the password given", {
  timeout: 90_000,
}, async () => {
  const slug = `users-${randomBytes(4).toString("hex")}`;
  const email = `Ops.${slug}@Example.com`;
  const printed = JSON.parse(
    (
      await admin(
        "create-user",
        "--org",
        slug,
        "--email",
        email,
        "--password",
        "correct horse battery",
        "--name",
        "Ops Person",
        "--json",
      )
    ).stdout.trim(),
  );
  expect(printed).toEqual({
    orgId: expect.any(String),
    userId: expect.any(String),
    email: email.toLowerCase(),
    role: "owner",
  });
  const org = await prisma().organisation.findUnique({ where: { slug } });
  expect(org?.id).toBe(printed.orgId);
  expect(await prisma().member.findFirst({ where: { orgId: printed.orgId, userId: printed.userId } })).toMatchObject({
    role: "owner",
  });
  const account = await prisma().authAccount.findFirst({ where: { userId: printed.userId, providerId: "credential" } });
  // better-auth's scrypt (salt:key in hex); never the password itself.
  expect(account?.password).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);

  // Sign-in is case-insensitive on the email and refuses a wrong password.
  const request = await signIn(email.toUpperCase(), "correct horse battery");
  expect((await authFor(TEST_ORIGIN).api.getSession({ headers: request.headers }))?.user.id).toBe(printed.userId);
  await expect(signIn(email, "correct horse battery!")).rejects.toMatchObject({ statusCode: 401 });

  const noRole = await failing("create-user", "--org", slug, "--email", `second-${slug}@example.com`);
  expect(noRole.code).toBe(2);
  expect(noRole.stderr).toContain(`--role is required: ${slug} already has an owner`);

  const second = JSON.parse(
    (await admin("create-user", "--org", slug, "--email", `dev-${slug}@example.com`, "--role", "developer", "--json"))
      .stdout,
  );
  expect(second).toMatchObject({
    orgId: printed.orgId,
    role: "developer",
    password: expect.stringMatching(/^[\w-]{24}$/),
  });
  await signIn(`dev-${slug}@example.com`, second.password);
  expect(await prisma().member.count({ where: { orgId: printed.orgId } })).toBe(2);
});

it("create-user refuses a taken email, a weak password, an unknown role and missing options, and writes nothing", {
  timeout: 90_000,
}, async () => {
  const slug = `users-${randomBytes(4).toString("hex")}`;
  const email = `taken-${slug}@example.com`;
  await admin("create-user", "--org", slug, "--email", email, "--password", "first password", "--json");

  const taken = await failing(
    "create-user",
    "--org",
    `${slug}-other`,
    "--email",
    email.toUpperCase(),
    "--password",
    "x".repeat(12),
  );
  expect(taken.code).toBe(1);
  expect(taken.stderr).toContain("error: A user with this email already exists");

  const short = await failing(
    "create-user",
    "--org",
    slug,
    "--email",
    `short-${slug}@example.com`,
    "--role",
    "viewer",
    "--password",
    "short",
  );
  expect(short.code).toBe(1);
  expect(short.stderr).toContain("error: Password must be at least 10 characters");

  const malformed = await failing(
    "create-user",
    "--org",
    slug,
    "--email",
    "not-an-email",
    "--role",
    "viewer",
    "--password",
    "long enough pw",
  );
  expect(malformed.code).toBe(1);
  expect(malformed.stderr).toContain("error: Email must be an email address");

  const role = await failing("create-user", "--org", slug, "--email", `r-${slug}@example.com`, "--role", "superuser");
  expect(role.code).toBe(2);
  expect(role.stderr).toContain("--role must be one of owner, admin, developer, viewer");

  const noEmail = await failing("create-user", "--org", slug);
  expect(noEmail.code).toBe(2);
  expect(noEmail.stderr).toContain("--email is required");

  expect(await prisma().user.count({ where: { email: { contains: slug } } })).toBe(1);
});

it("invite prints a link on the public origin that a new colleague accepts; an owner role is refused", {
  timeout: 90_000,
}, async () => {
  const slug = `invite-${randomBytes(4).toString("hex")}`;
  await admin(
    "create-user",
    "--org",
    slug,
    "--email",
    `owner-${slug}@example.com`,
    "--password",
    "owner password 1",
    "--json",
  );
  const invited = JSON.parse(
    (await admin("invite", "--org", slug, "--email", `New-${slug}@example.com`, "--role", "developer", "--json"))
      .stdout,
  );
  expect(invited).toEqual({
    orgId: expect.any(String),
    email: `new-${slug}@example.com`,
    role: "developer",
    link: expect.stringMatching(new RegExp(`^${TEST_ORIGIN}/invite/[A-Za-z0-9]{32}$`)),
    expiresAt: expect.any(String),
  });
  const days = (Date.parse(invited.expiresAt) - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(6.99);
  expect(days).toBeLessThanOrEqual(7);
  const id = invited.link.split("/").at(-1);
  expect(await getInvitationPage(id)).toMatchObject({
    status: "pending",
    role: "developer",
    orgName: slug,
    invitedBy: { email: `owner-${slug}@example.com` },
    hasAccount: false,
  });
  // The session the command used to invite through better-auth ended with it.
  const owner = await prisma().user.findUniqueOrThrow({ where: { email: `owner-${slug}@example.com` } });
  expect(await prisma().session.count({ where: { userId: owner.id } })).toBe(0);
  const entry = await prisma().settingsAuditEntry.findFirst({
    where: { orgId: invited.orgId, action: "invitation.created" },
  });
  expect(entry).toMatchObject({ actorEmail: "operator (npm run admin)", target: `new-${slug}@example.com` });

  await acceptInvitationWithNewAccount(browserRequest(), id, { name: "New Colleague", password: "a new password" });
  expect(
    await prisma().member.findFirst({ where: { orgId: invited.orgId, user: { email: `new-${slug}@example.com` } } }),
  ).toMatchObject({ role: "developer" });

  const ownerRole = await failing("invite", "--org", slug, "--email", `boss-${slug}@example.com`, "--role", "owner");
  expect(ownerRole.code).toBe(1);
  expect(ownerRole.stderr).toContain("Role must be one of admin, developer, viewer");
  const noOwner = await failing(
    "invite",
    "--org",
    `${slug}-empty`,
    "--email",
    `x-${slug}@example.com`,
    "--role",
    "viewer",
  );
  expect(noOwner.code).toBe(1);
  expect(noOwner.stderr).toContain("has no owner yet");
});

it("reset-password prints a one-time link: the new password signs in, the old one and the link no longer work", {
  timeout: 90_000,
}, async () => {
  const slug = `reset-${randomBytes(4).toString("hex")}`;
  const email = `forgot-${slug}@example.com`;
  await admin("create-user", "--org", slug, "--email", email, "--password", "old password 1", "--json");
  const before = await signIn(email, "old password 1");
  const printed = JSON.parse((await admin("reset-password", "--email", email, "--json")).stdout);
  expect(printed.link).toMatch(new RegExp(`^${TEST_ORIGIN}/reset-password\\?token=[A-Za-z0-9]+$`));
  const token = new URL(printed.link).searchParams.get("token") as string;

  await resetPassword(browserRequest(), token, "brand new password");
  await signIn(email, "brand new password");
  await expect(signIn(email, "old password 1")).rejects.toMatchObject({ statusCode: 401 });
  // Every session of the user ended with the reset.
  expect(await authFor(TEST_ORIGIN).api.getSession({ headers: before.headers })).toBeNull();
  await expect(resetPassword(browserRequest(), token, "another password")).rejects.toMatchObject({
    code: "validation_error",
  });
  const unknown = await failing("reset-password", "--email", `nobody-${slug}@example.com`);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain(`No user has the email nobody-${slug}@example.com`);
});
