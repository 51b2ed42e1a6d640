// Shared steps of the end-to-end specs: organisations and users through the operator command, sign-in, calls to
// the REST API with fetch, a local webhook receiver, and screenshots under e2e/artifacts/.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { expect, type Page } from "@playwright/test";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");

/** Base URL of the app under test (set by e2e/global-setup.ts). */
export function baseUrl(): string {
  return process.env.E2E_BASE_URL ?? `http://127.0.0.1:${process.env.E2E_PORT ?? 3210}`;
}

/** Name of better-auth's session cookie on plain http (`__Secure-` is prefixed over https). */
export const SESSION_COOKIE = "msp.session_token";

/** A settings user created for one spec, in an organisation of its own. */
export interface TestUser {
  orgId: string;
  slug: string;
  email: string;
  password: string;
}

/** Runs the operator command (`npm run admin -- …`) against the test database and parses its JSON output. */
export async function admin<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args, "--json"], {
    cwd: root,
    env: process.env,
  });
  return JSON.parse(stdout.trim()) as T;
}

/** Creates an organisation and its owner with `npm run admin -- create-user`. */
export async function createUser(prefix: string): Promise<TestUser> {
  const suffix = randomBytes(4).toString("hex");
  const slug = `${prefix}-${suffix}`;
  const email = `${prefix}-${suffix}@example.com`;
  const password = `pw-${randomBytes(9).toString("base64url")}`;
  const created = await admin<{ orgId: string; email: string }>(
    "create-user",
    "--org",
    slug,
    "--email",
    email,
    "--password",
    password,
  );
  return { orgId: created.orgId, slug, email: created.email, password };
}

/** Adds a member with `role` to `org`'s organisation with `npm run admin -- create-user --role`. */
export async function addMember(org: Pick<TestUser, "orgId" | "slug">, role: string): Promise<TestUser> {
  const email = `${role}-${randomBytes(4).toString("hex")}@example.com`;
  const password = `pw-${randomBytes(9).toString("base64url")}`;
  await admin("create-user", "--org", org.slug, "--email", email, "--password", password, "--role", role);
  return { orgId: org.orgId, slug: org.slug, email, password };
}

/** An invitation link to `org` for a new email, made with `npm run admin -- invite`. */
export async function inviteLink(org: Pick<TestUser, "slug">, role = "developer"): Promise<string> {
  const email = `invitee-${randomBytes(4).toString("hex")}@example.com`;
  return (await admin<{ link: string }>("invite", "--org", org.slug, "--email", email, "--role", role)).link;
}

/**
 * The sign-in page's email step: types `email` and presses Continue, then waits for the password field (an email that
 * does not sign in through single sign-on).
 */
export async function continueWithEmail(page: Page, email: string): Promise<void> {
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Continue", exact: true }).click();
  await expect(page.getByLabel("Password")).toBeVisible();
}

/** Signs in through the form (at `origin`, default the base URL) and waits for the overview. */
export async function signIn(
  page: Page,
  user: Pick<TestUser, "email" | "password" | "slug">,
  origin = "",
): Promise<void> {
  await page.goto(`${origin}/signin`);
  await continueWithEmail(page, user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByTestId("org-name")).toHaveText(user.slug);
}

/** Saves a screenshot (full page unless `fullPage: false`) as e2e/artifacts/<name>.png and prints its path. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  const dir = path.join(root, "e2e", "artifacts");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  console.log(`screenshot: ${path.relative(root, file)}`);
  return file;
}

/** Calls the REST API with a key: `{ status, body }`. */
export async function callApi(
  key: string,
  method: string,
  apiPath: string,
  body?: unknown,
): Promise<{ status: number; body: { success: boolean; error?: { code: string } } & Record<string, unknown> }> {
  const response = await fetch(`${baseUrl()}/api/v1${apiPath}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** One request a {@link Receiver} got. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 answering 200 and recording every request. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** Starts a {@link Receiver} on a free loopback port. */
export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/crm`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
