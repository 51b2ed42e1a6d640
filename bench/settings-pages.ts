// The settings area as its users browse it, for the memory measure of bench/run.ts: the demo organisation (made by
// start-up's own seed, server/demo/demo.ts) with a webhook endpoint, its owner signed in through better-auth as a
// browser would be (the session cookie), and every settings page plus the API reference requested with that cookie.
import { randomBytes } from "node:crypto";
import { Agent } from "node:http";
import path from "node:path";
import { cookieHeader } from "../test/helpers/members";
import { send } from "./load";

/** The demo owner's browser: its session cookie and the id of the demo organisation's webhook endpoint. */
export interface DemoSession {
  cookie: string;
  endpointId: string;
}

/**
 * Seeds the demo organisation into an empty database as a first `npm start` does (or, when the database has it
 * already, takes its credentials from `dataDir`), adds a webhook endpoint and signs its owner in. Imports the server's
 * modules, so the database (`DATABASE_URL`, or the running server's embedded one in `DATA_DIR`) and the signing secret
 * (`BETTER_AUTH_SECRET`, or `DATA_DIR/auth-secret`) must already be the server's.
 * @param dataDir where the demo credentials are kept.
 * @throws Error when the database has other organisations but no demo (none is seeded then).
 */
export async function demoOwnerSession(dataDir: string): Promise<DemoSession> {
  const { ensureDemo } = await import("../server/demo/demo");
  const { createWebhookEndpoint } = await import("../server/webhooks/endpoints");
  const { authFor } = await import("../server/identity/better-auth");
  const { CLIENT_ADDRESS_HEADER } = await import("../server/platform/client-address");
  const demo = await ensureDemo(dataDir);
  if (!demo) throw new Error("the bench database had organisations before the demo was seeded");
  const { endpoint } = await createWebhookEndpoint(demo.orgId, {
    url: "https://hooks.example.com/bench",
    events: ["*"],
    description: "bench",
  });
  const headers = new Headers({ "user-agent": "bench", [CLIENT_ADDRESS_HEADER]: "198.18.0.1" });
  const signedIn = await authFor("http://localhost:3000").api.signInEmail({
    headers,
    body: { email: demo.email, password: demo.password },
    returnHeaders: true,
  });
  return { cookie: cookieHeader(signedIn.headers), endpointId: endpoint.id };
}

/** Every settings page of the demo owner, and the API reference, by path. */
/**
 * A new owner of the organisation, signed in at `origin`: the `Cookie` header of the session better-auth set (for the
 * benchmark's settings requests: the usage CSV, the pages).
 */
export async function signedInOwner(origin: string, orgId: string, label: string): Promise<string> {
  const { createMemberUser } = await import("../server/identity/team/operator");
  const { authFor } = await import("../server/identity/better-auth");
  const email = `${label}-${randomBytes(4).toString("hex")}@bench.example`;
  const password = `pw-${randomBytes(9).toString("base64url")}`;
  await createMemberUser(origin, orgId, { email, password, role: "owner", name: "Bench owner" });
  const { headers } = await authFor(origin).api.signInEmail({
    headers: new Headers({ "user-agent": "bench" }),
    body: { email, password },
    returnHeaders: true,
  });
  return headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
}

export function settingsPages(endpointId: string): string[] {
  return [
    "/settings",
    "/settings/keys",
    "/settings/webhooks",
    `/settings/webhooks/${endpointId}`,
    "/settings/usage",
    "/settings/fields",
    "/settings/team",
    "/settings/security",
    "/settings/audit",
    "/docs",
  ];
}

/**
 * Requests every page of {@link settingsPages} `rounds` times in turn, one at a time, with the session cookie, calling
 * `after(path)` after each answer (the bench reads the server's memory there).
 * @throws Error naming a page that did not answer 200 (a redirect to sign-in means the cookie was refused).
 */
export async function browseSettings(
  origin: string,
  session: DemoSession,
  rounds: number,
  after: (path: string) => void = () => undefined,
): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  try {
    for (let round = 0; round < rounds; round++) {
      for (const page of settingsPages(session.endpointId)) {
        const answer = await send(agent, `${origin}${page}`, { headers: { cookie: session.cookie } });
        if (answer.status !== 200)
          throw new Error(`GET ${page} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
        after(page);
      }
    }
  } finally {
    agent.destroy();
  }
}

// Run as a program (`node --import tsx bench/settings-pages.ts <DATA_DIR>`) beside an `npm start` on embedded defaults:
// signs the demo owner of that running server's database in (reached through its socket, as the admin command is) and
// prints the session as JSON.
if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error("usage: settings-pages.ts <DATA_DIR of the running npm start>");
  const session = await demoOwnerSession(dataDir);
  console.log(JSON.stringify(session));
  await (await import("../server/db/client")).closeDb();
  await (await import("../server/kv")).closeKv();
}
