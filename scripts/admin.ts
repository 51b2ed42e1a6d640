// Operator command for self-hosters and scripts: `npm run admin -- <command> [options]`, compiled to dist/admin.js.
// `runAdmin` is the command itself, printing through the output it is given and returning the exit status, so tests
// run it in the test process; run as a program, it prints to the console, closes the database and the key-value store
// and exits with that status. Its stdout is its result alone, so `npm run -s admin -- … --json` can be piped: the
// service's log lines go to stderr, and `-s` keeps npm's own `> msp-crm-api@1.0.0 admin` lines off stdout.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { parseArgs } from "node:util";
import { closeDb } from "../server/db/client";
import type { RateLimitPlan } from "../server/db/generated/client";
import { migrateProcessDatabase } from "../server/db/ready";
import { withStatementClass } from "../server/db/statement-budget";
import { prisma } from "../server/db/transaction";
import { seedDemoBook } from "../server/demo/seed";
import { ApiError } from "../server/errors";
import { defaultOrigin } from "../server/identity/better-auth";
import { passwordResetLink } from "../server/identity/password-reset";
import { suspendSsoEnforcement } from "../server/identity/sso/settings";
import { createMemberUser, inviteFromCommand, organisationHasOwner } from "../server/identity/team/operator";
import { closeKv } from "../server/kv";
import { logToStderr } from "../server/observability/logger";
import { validateRequestedScopes } from "../server/platform/api-keys/scopes";
import { createApiKey } from "../server/platform/api-keys/service";
import { ensureOrganisation } from "../server/platform/organisations";
import { createWebhookEndpoint } from "../server/webhooks/endpoints";

const USAGE = `Usage:
  npm run admin -- create-key --org <slug> --scopes <comma-separated> [--name <name>] [--test]
                              [--plan starter|growth|scale|pro] [--limits <perKeyPerMin>,<perOrgPerMin>] [--json]
    Creates the organisation if it does not exist, applies the plan/limits when given, creates an API key and
    prints {"orgId", "key", "scopes"} (with --json) — the raw key is shown only this once.
    Plans (requests/min per key, per organisation): starter 30,60; growth 60,120; scale 120,240; pro 120,240 by
    default and configurable with --limits within 120–300 per key and 240–600 per organisation. On other plans
    --limits overrides the plan's limits as given.
  npm run admin -- seed-demo --org <slug> [--json]
    Creates the organisation if needed and fills it with a demo MSP book (200 accounts, 1,000 contacts, 400 deals,
    5,000 devices, tasks, notes, touchpoints, signals, 90 days of health history) in one transaction, recording
    each record's event (never delivered to webhooks).
  npm run admin -- create-webhook --org <slug> --url <url> --events <comma-separated event names|*>
                                  [--description <text>] [--json]
    Creates the organisation if needed and a webhook endpoint in it, enabled, and prints its id and signing
    secret: {"orgId", "id", "url", "events", "secret"} with --json. Quote '*' in the shell.
  npm run admin -- create-user --org <slug> --email <email> [--role owner|admin|developer|viewer]
                               [--password <password>] [--name <name>] [--json]
    Creates the organisation if needed and a settings user who is a member of it with the role (sign-in at /signin).
    --role may be left out only while the organisation has no owner: the user becomes its owner. Without --password
    a password is generated and printed once. Prints {"orgId", "userId", "email", "role", "password"?} with --json.
  npm run admin -- invite --org <slug> --email <email> --role admin|developer|viewer [--json]
    Invites someone to the organisation (which needs an owner): prints the invitation link (PUBLIC_URL, else
    http://localhost:$PORT), valid 7 days, and mails it when SMTP_URL and MAIL_FROM are set.
    Prints {"orgId", "email", "role", "link", "expiresAt"} with --json.
  npm run admin -- reset-password --email <email> [--json]
    Prints a one-time link (valid 1 hour) where the user sets a new password; every session of the user then ends.
    Prints {"email", "link", "expiresAt"} with --json.
  npm run admin -- sso-enforcement-off --org <slug> [--json]
    Stops enforcing "single sign-on required" for the organisation (its identity provider is down, say): members
    sign in with passwords and passkeys again until an owner or admin saves the SSO policy again. Recorded in the
    organisation's audit trail. Prints {"orgId", "mode", "wasEnforced"} with --json.
With --json, stdout is that one JSON line and nothing else (log lines go to stderr); add -s so that npm prints
nothing of its own either: npm run -s admin -- create-key … --json | jq -r .key`;

async function seedDemo(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { org: { type: "string" }, json: { type: "boolean", default: false } },
    strict: true,
  });
  const org = await ensureOrganisation(orgSlug(values.org));
  const started = performance.now();
  const result = await seedDemoBook(org.id);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (values.json) io.out(JSON.stringify({ orgId: org.id, ...result, seconds: Number(seconds) }));
  else if ("skipped" in result) io.out(`Organisation ${org.slug} already has deals; nothing seeded.`);
  else
    io.out(
      `Seeded ${org.slug} (${org.id}) in ${seconds} s: ${Object.entries(result)
        .map(([k, v]) => `${v} ${k}`)
        .join(", ")}`,
    );
}

const PLANS = new Set(["starter", "growth", "scale", "pro"]);

/** A wrong invocation: printed with the usage, exit status 2. */
class UsageError extends Error {}

function fail(message: string): never {
  throw new UsageError(message);
}

async function createKey(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: "string" },
      scopes: { type: "string" },
      name: { type: "string" },
      test: { type: "boolean", default: false },
      plan: { type: "string" },
      limits: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const slug = orgSlug(values.org);
  if (!values.scopes) fail("--scopes is required");
  if (values.plan && !PLANS.has(values.plan)) fail(`--plan must be one of ${[...PLANS].join(", ")}`);
  let limits: { perKey: number; perOrg: number } | undefined;
  if (values.limits) {
    const match = /^(\d+),(\d+)$/.exec(values.limits);
    if (!match) fail("--limits must be <perKeyPerMin>,<perOrgPerMin>, e.g. 200,400");
    limits = { perKey: Number(match[1]), perOrg: Number(match[2]) };
    if (limits.perKey < 1 || limits.perOrg < limits.perKey)
      fail("--limits: both positive, organisation-wide ≥ per key");
  }
  const scopes = validateRequestedScopes(values.scopes.split(","));
  const org = await ensureOrganisation(slug, {
    plan: values.plan?.toUpperCase() as RateLimitPlan | undefined,
    limits,
  });
  const { key, raw } = await createApiKey(org.id, {
    name: values.name ?? `created by admin command ${new Date().toISOString()}`,
    scopes,
    isTest: values.test ?? false,
  });
  if (values.json) {
    io.out(JSON.stringify({ orgId: org.id, key: raw, scopes: key.scopes }));
  } else {
    io.out(
      `Organisation ${org.slug} (${org.id}), plan ${org.plan}\nKey ${key.prefix}… scopes ${key.scopes.join(",")}\n\n  ${raw}\n\nStore it now: it cannot be shown again.`,
    );
  }
}

const ROLES = new Set(["owner", "admin", "developer", "viewer"]);

function orgSlug(value: string | undefined): string {
  if (!value || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(value))
    fail("--org <slug> is required (lowercase letters, digits, hyphens)");
  return value;
}

async function createUserCommand(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      name: { type: "string" },
      role: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const slug = orgSlug(values.org);
  if (!values.email) fail("--email is required");
  if (values.role !== undefined && !ROLES.has(values.role)) fail(`--role must be one of ${[...ROLES].join(", ")}`);
  // A generated password is printed once, like a key, so none has to appear in the shell history.
  const generated = values.password === undefined ? randomBytes(18).toString("base64url") : undefined;
  const org = await ensureOrganisation(slug);
  const role = values.role ?? ((await organisationHasOwner(org.id)) ? undefined : "owner");
  if (!role) fail(`--role is required: ${slug} already has an owner`);
  const user = await createMemberUser(defaultOrigin(), org.id, {
    email: values.email,
    password: values.password ?? (generated as string),
    name: values.name,
    role,
  });
  if (values.json) {
    io.out(JSON.stringify({ orgId: org.id, userId: user.userId, email: user.email, role, password: generated }));
  } else {
    io.out(
      `Organisation ${org.slug} (${org.id})\nUser ${user.email} (${user.userId}), ${role}${generated ? `\n\n  password: ${generated}\n\nStore it now: it cannot be shown again.` : ""}`,
    );
  }
}

async function inviteCommand(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: "string" },
      email: { type: "string" },
      role: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const slug = orgSlug(values.org);
  if (!values.email) fail("--email is required");
  if (!values.role) fail("--role is required: admin, developer or viewer");
  const org = await ensureOrganisation(slug);
  const invitation = await inviteFromCommand(defaultOrigin(), org.id, { email: values.email, role: values.role });
  if (values.json) {
    io.out(
      JSON.stringify({
        orgId: org.id,
        email: invitation.email,
        role: invitation.role,
        link: invitation.link,
        expiresAt: invitation.expiresAt.toISOString(),
      }),
    );
  } else {
    const mailed = invitation.mailed === "sent" ? `\nAlso mailed to ${invitation.email}.` : "";
    io.out(
      `Invited ${invitation.email} to ${org.slug} as ${invitation.role}.\n\n  ${invitation.link}\n\nThe link works until ${invitation.expiresAt.toISOString()}.${mailed}`,
    );
  }
}

async function resetPasswordCommand(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { email: { type: "string" }, json: { type: "boolean", default: false } },
    strict: true,
  });
  if (!values.email) fail("--email is required");
  const { link, expiresAt } = await passwordResetLink(defaultOrigin(), values.email);
  if (values.json)
    io.out(JSON.stringify({ email: values.email.trim().toLowerCase(), link, expiresAt: expiresAt.toISOString() }));
  else io.out(`Password reset for ${values.email}:\n\n  ${link}\n\nIt works once, until ${expiresAt.toISOString()}.`);
}

async function createWebhook(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      org: { type: "string" },
      url: { type: "string" },
      events: { type: "string" },
      description: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const slug = orgSlug(values.org);
  if (!values.url) fail("--url is required");
  if (!values.events) fail("--events is required: comma-separated event names, or *");
  const events = values.events
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const org = await ensureOrganisation(slug);
  try {
    const { endpoint, secret } = await createWebhookEndpoint(org.id, {
      url: values.url,
      events,
      description: values.description,
    });
    if (values.json) {
      io.out(JSON.stringify({ orgId: org.id, id: endpoint.id, url: endpoint.url, events: endpoint.events, secret }));
    } else {
      io.out(
        `Organisation ${org.slug} (${org.id})\nWebhook ${endpoint.id} → ${endpoint.url} (${endpoint.events.join(",")})\n\n  signing secret: ${secret}\n\nVerify Service-Signature with it (see /docs/webhooks).`,
      );
    }
  } catch (error) {
    // Name each refused field: the generic message alone does not say what to fix.
    if (error instanceof ApiError && error.details)
      for (const detail of error.details) io.err(`  ${detail.path.join(".")}: ${detail.message}`);
    throw error;
  }
}

async function ssoEnforcementOffCommand(args: string[], io: AdminOutput): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { org: { type: "string" }, json: { type: "boolean", default: false } },
    strict: true,
  });
  const slug = orgSlug(values.org);
  const org = await prisma().organisation.findUnique({ where: { slug }, select: { id: true } });
  if (!org) throw new ApiError("not_found", `No organisation has the slug ${slug}`);
  const { mode, wasEnforced } = await suspendSsoEnforcement(org.id);
  if (values.json) io.out(JSON.stringify({ orgId: org.id, mode, wasEnforced }));
  else
    io.out(
      `Single sign-on enforcement is off for ${slug} (mode ${mode}${wasEnforced ? ", was enforced" : ""}): passwords and passkeys work again until an owner or admin saves the policy.`,
    );
}

/** Where the command prints: its result on `out`, problems on `err`, one call per message. */
export interface AdminOutput {
  out(text: string): void;
  err(text: string): void;
}

const CONSOLE: AdminOutput = { out: (text) => console.log(text), err: (text) => console.error(text) };

const COMMANDS: Record<string, (args: string[], io: AdminOutput) => Promise<void>> = {
  "create-key": createKey,
  "seed-demo": seedDemo,
  "create-webhook": createWebhook,
  "create-user": createUserCommand,
  invite: inviteCommand,
  "reset-password": resetPasswordCommand,
  "sso-enforcement-off": ssoEnforcementOffCommand,
};

/**
 * Runs one operator command (`argv` as after `npm run admin --`, e.g. `["create-key", "--org", "acme", …]`) on this
 * process's database and key-value store, which it leaves open. `help`, `--help` and `-h` print the usage without a
 * database. Source: README, "Operator command".
 * @returns the exit status: 0 done; 1 refused (an `ApiError` such as a deprecated scope, or an option node:util
 *          cannot parse), the message on `err`; 2 a wrong invocation (unknown command, missing or invalid option),
 *          the message and the usage on `err`.
 * @throws whatever else fails (the database unreachable, a bug): the program prints its message and exits 1.
 */
export async function runAdmin(argv: readonly string[], io: AdminOutput = CONSOLE): Promise<number> {
  const [command, ...rest] = argv;
  if (
    command === "help" ||
    command === "--help" ||
    command === "-h" ||
    rest.includes("--help") ||
    rest.includes("-h")
  ) {
    io.out(USAGE);
    return 0;
  }
  const run = command ? COMMANDS[command] : undefined;
  try {
    if (!run) fail(command ? `Unknown command ${command}` : "No command given");
    await migrateProcessDatabase();
    // An operator's command may work through a whole organisation: no statement timeout (a request's is 5 s).
    await withStatementClass("maintenance", () => run(rest, io));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ApiError || (error instanceof TypeError && "code" in error)) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  logToStderr();
  try {
    process.exitCode = await runAdmin(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  } finally {
    // Both connections end, or the process would stay up on an open Redis socket (a key change publishes through it).
    await closeDb();
    await closeKv();
  }
}
