// `npm run admin -- create-user` (issue #6), run as a separate process the way an operator would, and the sign-in
// check it makes possible.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { prisma } from "../../server/db/transaction";
import { authenticateUser } from "../../server/services/users";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

function admin(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], { cwd: root, env: process.env });
}

async function failing(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await admin(...args);
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
  throw new Error(`admin ${args.join(" ")} succeeded`);
}

it("create-user creates the organisation and a user who can sign in with the password given", {
  timeout: 60_000,
}, async () => {
  const slug = `users-${randomBytes(4).toString("hex")}`;
  const email = `Ops.${slug}@Example.com`;
  const { stdout } = await admin(
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
  );
  const printed = JSON.parse(stdout.trim());
  expect(printed).toEqual({ orgId: expect.any(String), userId: expect.any(String), email: email.toLowerCase() });

  const org = await prisma().organisation.findUnique({ where: { slug } });
  expect(org?.id).toBe(printed.orgId);
  const user = await prisma().user.findUnique({ where: { id: printed.userId } });
  expect(user).toMatchObject({ orgId: printed.orgId, email: email.toLowerCase(), name: "Ops Person" });
  // bcrypt, cost 12; never the password itself.
  expect(user?.passwordHash).toMatch(/^\$2b\$12\$[./A-Za-z0-9]{53}$/);
  expect(user?.passwordHash).not.toContain("correct horse");

  // Sign-in is case-insensitive on the email and refuses a wrong password.
  expect(await authenticateUser(email.toUpperCase(), "correct horse battery")).toMatchObject({
    id: printed.userId,
    orgId: printed.orgId,
  });
  expect(await authenticateUser(email, "correct horse battery!")).toBeNull();
  expect(await authenticateUser(`nobody-${slug}@example.com`, "correct horse battery")).toBeNull();

  // A second user joins the same organisation.
  const second = JSON.parse(
    (
      await admin(
        "create-user",
        "--org",
        slug,
        "--email",
        `second-${slug}@example.com`,
        "--password",
        "another secret",
        "--json",
      )
    ).stdout,
  );
  expect(second.orgId).toBe(printed.orgId);
  expect(await prisma().user.count({ where: { orgId: printed.orgId } })).toBe(2);
});

it("create-user without --password generates one, prints it once and it signs in", { timeout: 60_000 }, async () => {
  const slug = `users-${randomBytes(4).toString("hex")}`;
  const email = `gen-${slug}@example.com`;
  const printed = JSON.parse((await admin("create-user", "--org", slug, "--email", email, "--json")).stdout.trim());
  expect(printed.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
  expect(await authenticateUser(email, printed.password)).toMatchObject({ id: printed.userId });

  const human = await admin("create-user", "--org", slug, "--email", `human-${slug}@example.com`);
  const password = /password: (\S+)/.exec(human.stdout)?.[1] ?? "";
  expect(human.stdout).toContain("Store it now: it cannot be shown again.");
  expect(await authenticateUser(`human-${slug}@example.com`, password)).not.toBeNull();
});

it("create-user refuses a taken email, a weak password and missing options, and writes nothing", {
  timeout: 60_000,
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
    "--password",
    "short",
  );
  expect(short.code).toBe(1);
  expect(short.stderr).toContain("error: Password must be at least 10 characters");

  const long = await failing(
    "create-user",
    "--org",
    slug,
    "--email",
    `long-${slug}@example.com`,
    "--password",
    "é".repeat(40),
  );
  expect(long.code).toBe(1);
  expect(long.stderr).toContain("at most 72 bytes");

  const malformed = await failing(
    "create-user",
    "--org",
    slug,
    "--email",
    "not-an-email",
    "--password",
    "long enough pw",
  );
  expect(malformed.code).toBe(1);
  expect(malformed.stderr).toContain("error: Email must be an email address");

  const noEmail = await failing("create-user", "--org", slug);
  expect(noEmail.code).toBe(2);
  expect(noEmail.stderr).toContain("--email is required");

  expect(await prisma().user.count({ where: { email: { contains: slug } } })).toBe(1);
});
