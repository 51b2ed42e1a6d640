// Playwright global setup: a fresh PostgreSQL database with every migration, and the built app served on it with
// `npm start`'s compiled server (real PostgreSQL and Redis, loopback webhooks allowed for the test receiver). The environment set
// here reaches the test workers (DATABASE_URL for the admin command, E2E_BASE_URL).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFreshDatabase } from "../test/helpers/fresh-database";

const root = path.resolve(import.meta.dirname, "..");

async function waitForServer(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the server exited with ${child.exitCode}; see .ci/tmp/e2e-server.log`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`The app did not answer ${url} within ${timeoutMs} ms; see .ci/tmp/e2e-server.log`);
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  process.env.REDIS_URL ??= "redis://127.0.0.1:6379";
  // Every browser and test signs in from 127.0.0.1: a prefix of the run's own keeps this run's sign-in attempts, rate
  // limits and windows apart from those of earlier runs and other checkouts on the same Redis (the sign-in limit of
  // one address spans 15 minutes).
  process.env.KV_PREFIX ??= `e2e-${randomBytes(4).toString("hex")}:`;
  // One browser visits every page at both widths from 127.0.0.1 faster than any person: the pages' window per visitor
  // (tested on its own in test/integration/http/pages-limit.test.ts) would refuse it, as the integration tier's setup
  // says too.
  process.env.RATE_LIMIT_PAGES_PER_MIN ??= "1000000";
  // Production (NODE_ENV=production with DATABASE_URL) needs the secret; the admin command signs with the same one.
  process.env.BETTER_AUTH_SECRET ??= "e2e-secret-for-settings-cookies-0123456789";
  // e2e/sso.spec.ts starts an OIDC provider and a DNS server on these loopback ports: the server must trust the
  // provider's origin (loopback issuers are refused otherwise) and ask that DNS server for the domains' TXT records.
  const port = Number(process.env.E2E_PORT ?? 3210);
  process.env.E2E_IDP_PORT ??= String(port + 1);
  process.env.E2E_DNS_PORT ??= String(port + 2);
  if (process.env.E2E_BASE_URL) {
    // A server the developer started: the tests use its database.
    if (!process.env.E2E_DATABASE_URL) throw new Error("E2E_BASE_URL needs E2E_DATABASE_URL (the server's database)");
    process.env.DATABASE_URL = process.env.E2E_DATABASE_URL;
    return async () => undefined;
  }
  if (!existsSync(path.join(root, ".next", "BUILD_ID")) || !existsSync(path.join(root, "dist", "serve.js"))) {
    throw new Error("No production build: run `npm run build` first (`npm test` builds before the tests)");
  }

  const { url, drop } = await createFreshDatabase("crm_e2e");
  process.env.DATABASE_URL = url;

  const baseUrl = `http://127.0.0.1:${port}`;
  process.env.E2E_BASE_URL = baseUrl;
  mkdirSync(path.join(root, ".ci", "tmp"), { recursive: true });
  const log = createWriteStream(path.join(root, ".ci", "tmp", "e2e-server.log"));
  // The README's start command as users run it: node with npm start's flags on the compiled server.
  const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } };
  const nodeFlags = manifest.scripts.start.split(/\s+/).filter((word) => word.startsWith("--"));
  const server = spawn(process.execPath, [...nodeFlags, path.join(root, "dist", "serve.js")], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      REDIS_URL: process.env.REDIS_URL,
      WEBHOOKS_ALLOW_LOOPBACK: "true",
      DATA_DIR: mkdtempSync(path.join(tmpdir(), "crm-e2e-")),
      PORT: String(port),
      PUBLIC_URL: "",
      NODE_ENV: "production",
      SSO_TRUSTED_IDP_ORIGINS: `http://127.0.0.1:${process.env.E2E_IDP_PORT},http://localhost:${process.env.E2E_IDP_PORT}`,
      SSO_DNS_SERVERS: `127.0.0.1:${process.env.E2E_DNS_PORT}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout?.pipe(log);
  server.stderr?.pipe(log);
  try {
    await waitForServer(`${baseUrl}/api/v1/status`, server, 120_000);
  } catch (error) {
    server.kill("SIGTERM");
    throw error;
  }

  return async () => {
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (server.exitCode === null) server.kill("SIGKILL");
    }
    await drop();
  };
}
