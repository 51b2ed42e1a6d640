// `npm start` (compiled to dist/serve.js by `npm run build`) and `npm run dev` (this file under tsx, with --dev): the
// service in one process (docs/architecture.md, "The REST facade", "The embedded database", "Running in production").
// It validates the environment, opens the database (as the one owner of the embedded database when DATABASE_URL is
// unset, serving it to other processes on a loopback socket), applies migrations, seeds the demo organisation into an
// empty database, then serves on node:http: /livez and /readyz, /api/v1 straight through the REST facade's pipeline,
// every other path through Next.js, prepared at the first such request (settings, docs, /api/inngest, /api/trpc).
// SIGINT and SIGTERM turn /readyz to 503, then drain requests, store the pending audit rows and close the database
// cleanly; a second signal (a second after the first or later) exits at once.
//
// Only this file's first step is imported statically: every module the server runs is imported after it, so that
// what must run first (a telemetry SDK patching node:http, pg, ioredis) can; Node's built-in modules excepted.
import { existsSync } from "node:fs";
import type { Server, ServerResponse } from "node:http";
import path from "node:path";
import { ensureSupportedNode } from "./node-runtime";

const root = path.resolve(import.meta.dirname, "..");
const dev = process.argv.includes("--dev");
// Before anything reads it: Next.js and the environment schema both look at NODE_ENV.
(process.env as Record<string, string>).NODE_ENV ??= dev ? "development" : "production";

/** A second stop signal within this many ms of the first is the same one delivered twice, not a request to hurry. */
const REPEATED_SIGNAL_MS = 1_000;

/** Whether a request target is served by the REST facade rather than Next.js. */
function isApiTarget(target: string): boolean {
  return target === "/api/v1" || target.startsWith("/api/v1/") || target.startsWith("/api/v1?");
}

// Next.js makes the redirects of server components (`redirect("/signin")`) absolute with the address it listens on
// (`http://127.0.0.1:3000/signin`), which a browser that reached the server by another name (a LAN host name, a
// proxy) cannot follow. A Location on the server's own loopback or unspecified address becomes a path (RFC 9110
// allows relative references), so the browser stays on the origin it used.
const OWN_ORIGIN = /^https?:\/\/(?:127\.0\.0\.1|localhost|\[::1?\]|0\.0\.0\.0)(?::\d+)?(?=\/)/i;

/** Rewrites Location headers on the server's own address to paths (see {@link OWN_ORIGIN}). */
function relativeRedirects(res: ServerResponse): void {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) =>
    setHeader(
      name,
      name.toLowerCase() === "location" && typeof value === "string" ? value.replace(OWN_ORIGIN, "") : value,
    );
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function main(): Promise<void> {
  await ensureSupportedNode(root);
  // V8's code cache on disk (NODE_COMPILE_CACHE, default under the OS temp folder): a restart skips compiling Next.js
  // and the server's modules again. Imported here: Node 20, re-run above on a supported Node, has no such function.
  (await import("node:module")).enableCompileCache();
  const { env, productionRefusal } = await import("../server/env");
  let config: ReturnType<typeof env>;
  try {
    config = env();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  // A secret left at .env.example's value, or no PUBLIC_URL where browsers come from elsewhere: one line, exit 1.
  const refusal = productionRefusal(config);
  if (refusal) {
    console.error(refusal);
    process.exit(1);
  }
  // The embedded database's thread first (PGlite takes about 0.7 s to open): it opens while this thread imports the
  // telemetry and the server. Neither PGlite nor the lock needs instrumenting.
  let opening: Promise<import("../server/db/embedded").EmbeddedDatabase> | undefined;
  if (!config.DATABASE_URL) {
    // A new data directory starts as the build's copy with the demo book already in it when the demo is wanted.
    opening = (await import("../server/db/embedded")).openEmbeddedDatabase(config.DATA_DIR, {
      template: config.SEED_DEMO ? "demo" : "migrated",
    });
    opening.catch(() => undefined);
  }
  // Telemetry first: what it instruments (the database client, ioredis) is imported below (docs/architecture.md,
  // "Observability").
  const { startTelemetry, stopTelemetry } = await import("../server/observability/telemetry");
  await startTelemetry().catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });

  const { closeDb, db, preloadQueryCompiler } = await import("../server/db/client");
  const { EmbeddedDatabaseBusyError } = await import("../server/db/embedded");
  const { migrateProcessDatabase } = await import("../server/db/ready");
  // The database opens (the embedded one in a thread of its own) while this thread loads the server's modules.
  const migrating = migrateProcessDatabase({ own: true, opening });
  migrating.catch(() => undefined);

  const { createServer } = await import("node:http");
  const { ensureDemo } = await import("../server/demo/demo");
  const { startupBanner } = await import("../server/platform/status/startup");
  const { markShuttingDown } = await import("../server/platform/status/service");
  const { nodeApiListener, answerClientError, writeReply } = await import("../server/http/node");
  const { probeOf, probeReply } = await import("../server/http/probes");
  const { flushAudit } = await import("../server/platform/request-log/record");
  const { dispatchesSettled } = await import("../server/webhooks/hand-over");
  const { closeKv } = await import("../server/kv");
  const { stampClientAddress } = await import("../server/http/origin");
  const { limitedPages, observedPages, pageRoutes, sameOriginActions } = await import("../server/http/pages");
  const { isMcpTarget, mcpListener } = await import("../server/mcp/endpoint");
  const { isOAuthTarget, oauthListener } = await import("../server/mcp/oauth-http");
  const { isScimTarget, scimListener } = await import("../server/http/scim");
  const { log } = await import("../server/observability/logger");
  // While the database opens: the query compiler its first query would load.
  await preloadQueryCompiler();
  let applied: string[];
  try {
    applied = await migrating;
  } catch (error) {
    console.error(error instanceof EmbeddedDatabaseBusyError ? error.message : `Database: ${(error as Error).message}`);
    await closeDb().catch(() => undefined);
    process.exit(1);
  }
  // Fails before serving when production has no BETTER_AUTH_SECRET (the settings' cookies need one shared secret).
  try {
    (await import("../server/identity/secret")).authSecret();
  } catch (error) {
    console.error((error as Error).message);
    await closeDb();
    process.exit(1);
  }
  // What tells a key worth a lookup from one that is not (the checksum secret, the first-format keys), read before
  // the first request (docs/architecture.md, "API keys and the key cache").
  await (await import("../server/platform/api-keys/recognition")).keyRecognition();
  const demo = config.SEED_DEMO ? await ensureDemo(config.DATA_DIR) : null;
  // Next.js (about two thirds of a restart's CPU time, a few hundred ms of this thread in one piece) is imported and
  // prepared at the first request for a page: /livez, /readyz and /api/v1 never go through it, so they answer as soon
  // as the database is ready and never wait for it; that first page request waits for the preparation
  // (docs/architecture.md, "Running in production"). A production build without Next.js's output fails here, at
  // start, rather than at that first page.
  const distDir = path.join(root, process.env.NEXT_DIST_DIR || ".next");
  if (!dev && !existsSync(path.join(distDir, "BUILD_ID"))) {
    console.error(`No Next.js build in ${distDir}: run npm run build first.`);
    await closeDb();
    process.exit(1);
  }
  type NextApp = ReturnType<typeof import("next").default>;
  let app: NextApp | undefined;
  let nextHandler: ReturnType<NextApp["getRequestHandler"]> | undefined;
  let preparing: Promise<NonNullable<typeof nextHandler>> | undefined;
  const prepareNext = () => {
    if (!preparing) {
      preparing = (async () => {
        const next = (await import("next")).default;
        app = next({ dev, dir: root, port: config.PORT });
        await app.prepare();
        nextHandler = app.getRequestHandler();
        return nextHandler;
      })();
      preparing.catch((error: unknown) => {
        console.error(error instanceof Error ? (error.stack ?? error.message) : error);
        void closeDb().finally(() => process.exit(1));
      });
    }
    return preparing;
  };
  const pages = observedPages(
    limitedPages(
      sameOriginActions((req, res) =>
        nextHandler ? nextHandler(req, res) : prepareNext().then((handle) => handle(req, res)),
      ),
    ),
    pageRoutes(distDir),
  );
  const api = nodeApiListener();
  const server = createServer((req, res) => {
    const target = req.url ?? "/";
    if (isApiTarget(target)) return api(req, res);
    if (isMcpTarget(target)) return mcpListener(req, res);
    if (isOAuthTarget(target)) return oauthListener(req, res);
    if (isScimTarget(target)) return scimListener(req, res);
    const probe = probeOf(target);
    if (probe) {
      probeReply(probe, req.method ?? "GET").then(
        (reply) => writeReply(res, reply),
        () => res.destroy(),
      );
      return;
    }
    // The settings' audit trail and sign-in limits count this address; a client never sets it itself.
    stampClientAddress(req.headers, req.socket.remoteAddress ?? null);
    relativeRedirects(res);
    pages(req, res);
  });
  server.on("clientError", answerClientError);
  // Ready before listening, so it is printed before the first request can be answered.
  const banner = await startupBanner({ database: db(), applied, demo, dev });
  try {
    await listen(server, config.PORT);
  } catch (error) {
    const busy = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
    console.error(busy ? `Port ${config.PORT} is in use: stop what holds it or set PORT.` : String(error));
    await closeDb();
    process.exit(1);
  }

  console.log(banner);
  // Scores missing or more than an hour old (accounts from before the health table, a stopped worker) are computed
  // once now, in the background; while a worker runs, the health refresh keeps them current.
  const { refreshChangedHealthScores } = await import("../server/records/health/refresh");
  refreshChangedHealthScores().catch((error: unknown) => log().error({ err: error }, "health refresh failed"));
  // Search re-indexes a stopped process left unfinished are taken up now, in the background (with a worker, its
  // every-minute run takes them too).
  const { requestSearchReindex } = await import("../server/records/search/reindex");
  requestSearchReindex();
  // Webhook alerts are checked here every minute too: with no worker running, no sweeper would notice the backlog.
  const { startAlertChecks } = await import("../server/webhooks/alerts");
  const stopAlertChecks = startAlertChecks();

  let stoppingSince: number | undefined;
  const stop = async (signal: NodeJS.Signals) => {
    if (stoppingSince !== undefined) {
      // One Ctrl-C can arrive twice: from the terminal to the whole process group, and forwarded by the wrapper that
      // re-runs an unsupported Node's command on Node 24 (scripts/node-runtime.ts). Only a later one means "now".
      if (Date.now() - stoppingSince < REPEATED_SIGNAL_MS) return;
      console.error(`${signal} again: exiting without a clean shutdown`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    stopAlertChecks();
    // Not ready first: a load balancer polling /readyz stops sending while everything is still served.
    markShuttingDown();
    const delay = config.SHUTDOWN_DELAY_MS;
    console.log(
      `${signal}: /readyz answers 503; ${delay > 0 ? `serving for ${delay} ms more, then ` : ""}finishing requests in flight, then closing the database`,
    );
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), 10_000);
    await closed;
    clearTimeout(force);
    await app?.close().catch(() => undefined);
    await dispatchesSettled();
    await flushAudit();
    await closeKv().catch(() => undefined);
    await closeDb();
    await stopTelemetry();
    console.log("Stopped.");
    process.exit(0);
  };
  process.on("SIGINT", (signal) => void stop(signal));
  process.on("SIGTERM", (signal) => void stop(signal));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
