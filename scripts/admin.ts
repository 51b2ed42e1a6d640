// Operator command for self-hosters and scripts (issue #2): `npm run admin -- <command> [options]`.
import { parseArgs } from "node:util";
import { validateRequestedScopes } from "../server/auth/scopes";
import { closeDb } from "../server/db/client";
import type { RateLimitPlan } from "../server/db/generated/client";
import { migrateProcessDatabase } from "../server/db/ready";
import { ApiError } from "../server/errors";
import { createApiKey } from "../server/services/api-keys";
import { ensureOrganisation } from "../server/services/organisations";
import { seedDemoBook } from "../server/services/seed";

const USAGE = `Usage:
  npm run admin -- create-key --org <slug> --scopes <comma-separated> [--name <name>] [--test]
                              [--plan starter|growth|scale|pro] [--limits <perKeyPerMin>,<perOrgPerMin>] [--json]
    Creates the organisation if it does not exist, applies the plan/limits when given, creates an API key and
    prints {"orgId", "key", "scopes"} (with --json) — the raw key is shown only this once.
  npm run admin -- seed-demo --org <slug> [--json]
    Creates the organisation if needed and fills it with a demo MSP book (200 accounts, 1,000 contacts, 400 deals,
    5,000 devices, tasks, notes, touchpoints, signals, 90 days of health history) through the API's services.`;

async function seedDemo(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { org: { type: "string" }, json: { type: "boolean", default: false } },
    strict: true,
  });
  if (!values.org || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(values.org))
    fail("--org <slug> is required (lowercase letters, digits, hyphens)");
  const org = await ensureOrganisation(values.org);
  const started = performance.now();
  const result = await seedDemoBook(org.id);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (values.json) console.log(JSON.stringify({ orgId: org.id, ...result, seconds: Number(seconds) }));
  else if ("skipped" in result) console.log(`Organisation ${org.slug} already has deals; nothing seeded.`);
  else
    console.log(
      `Seeded ${org.slug} (${org.id}) in ${seconds} s: ${Object.entries(result)
        .map(([k, v]) => `${v} ${k}`)
        .join(", ")}`,
    );
}

const PLANS = new Set(["starter", "growth", "scale", "pro"]);

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

async function createKey(args: string[]): Promise<void> {
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
  if (!values.org || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(values.org))
    fail("--org <slug> is required (lowercase letters, digits, hyphens)");
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
  const org = await ensureOrganisation(values.org, {
    plan: values.plan?.toUpperCase() as RateLimitPlan | undefined,
    limits,
  });
  const { key, raw } = await createApiKey(org.id, {
    name: values.name ?? `created by admin command ${new Date().toISOString()}`,
    scopes,
    isTest: values.test ?? false,
  });
  if (values.json) {
    console.log(JSON.stringify({ orgId: org.id, key: raw, scopes: key.scopes }));
  } else {
    console.log(
      `Organisation ${org.slug} (${org.id}), plan ${org.plan}\nKey ${key.prefix}… scopes ${key.scopes.join(",")}\n\n  ${raw}\n\nStore it now: it cannot be shown again.`,
    );
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  try {
    await migrateProcessDatabase();
    if (command === "create-key") await createKey(rest);
    else if (command === "seed-demo") await seedDemo(rest);
    else fail(command ? `Unknown command ${command}` : "No command given");
  } catch (error) {
    if (error instanceof ApiError || (error instanceof TypeError && "code" in error)) {
      console.error(`error: ${error.message}`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await closeDb();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
