// `npm start` (and `npm run dev` with --dev): the service in one process (DESIGN.md §3, §8, §10; issues #11 A, #12).
// It validates the environment, opens the database (as the one owner of the embedded database when DATABASE_URL is
// unset, serving it to other processes on a loopback socket), applies migrations, seeds the demo organisation into an
// empty database, then serves on node:http: /api/v1 straight through the REST facade's pipeline, every other path
// through Next.js (settings, docs, /api/inngest, /api/trpc). SIGINT and SIGTERM drain requests, store the pending audit
// rows and close the database cleanly; a second signal exits at once.
import { createServer, type Server, type ServerResponse } from "node:http";
import path from "node:path";
import { ensureSupportedNode } from "./node-runtime";

const root = path.resolve(import.meta.dirname, "..");
const dev = process.argv.includes("--dev");
// Before anything reads it: Next.js and the environment schema both look at NODE_ENV.
(process.env as Record<string, string>).NODE_ENV ??= dev ? "development" : "production";

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

/**
 * Source maps of a production server off (README: benchmarks, the RSS target of issue #12; the V8 heap flags that go
 * with it are in `package.json`'s start script). tsx turns Node's source-map support on for every module loaded after
 * it, so the server would read and keep the source maps of Next.js's server bundles and of node_modules: about 60 MB
 * of heap, 90 MB resident. Stack traces then point into tsx's output rather than the TypeScript; an operator who wants
 * them mapped sets NODE_OPTIONS=--enable-source-maps. `--dev` keeps them.
 */
async function sourceMapsOnlyWhenAsked(): Promise<void> {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  if (dev || given.includes("--enable-source-maps")) return;
  // Imported here, after ensureSupportedNode: Node 20 (re-run on a supported Node) has no setSourceMapsSupport.
  const { setSourceMapsSupport } = await import("node:module");
  setSourceMapsSupport(false);
}

async function main(): Promise<void> {
  await ensureSupportedNode(root);
  await sourceMapsOnlyWhenAsked();
  const { env } = await import("../server/env");
  let config: ReturnType<typeof env>;
  try {
    config = env();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  // Telemetry first: the modules it instruments (the database client, ioredis) are imported below (README:
  // Observability).
  const { startTelemetry, stopTelemetry } = await import("../server/observability/telemetry");
  await startTelemetry().catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });

  const { closeDb, db } = await import("../server/db/client");
  const { EmbeddedDatabaseBusyError } = await import("../server/db/embedded");
  const { migrateProcessDatabase } = await import("../server/db/ready");
  let applied: string[];
  try {
    applied = await migrateProcessDatabase({ own: true });
  } catch (error) {
    console.error(error instanceof EmbeddedDatabaseBusyError ? error.message : `Database: ${(error as Error).message}`);
    await closeDb().catch(() => undefined);
    process.exit(1);
  }

  // Fails before serving when production has no BETTER_AUTH_SECRET (the settings' cookies need one shared secret).
  try {
    (await import("../server/auth/secret")).authSecret();
  } catch (error) {
    console.error((error as Error).message);
    await closeDb();
    process.exit(1);
  }
  const { ensureDemo } = await import("../server/services/demo");
  const { CLIENT_ADDRESS_HEADER } = await import("../server/services/auth");
  const { clientAddress } = await import("../server/http/origin");
  const { startupBanner } = await import("../server/services/startup");
  const { nodeApiListener, answerClientError } = await import("../server/http/node");
  const { flushAudit } = await import("../server/services/audit");
  const { dispatchesSettled } = await import("../server/webhooks/hand-over");
  const { closeKv } = await import("../server/kv");
  const { observedPages, pageRoutes } = await import("../server/http/pages");
  const demo = await ensureDemo(config.DATA_DIR);

  const next = (await import("next")).default;
  const app = next({ dev, dir: root, port: config.PORT });
  await app.prepare();
  const pages = observedPages(
    app.getRequestHandler(),
    pageRoutes(path.join(root, process.env.NEXT_DIST_DIR || ".next")),
  );
  const api = nodeApiListener();
  const server = createServer((req, res) => {
    if (isApiTarget(req.url ?? "/")) api(req, res);
    else {
      // The settings' audit trail and sign-in limits count this address; a client never sets it itself.
      const address = clientAddress((name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(", ") : value;
      }, req.socket.remoteAddress ?? null);
      if (address) req.headers[CLIENT_ADDRESS_HEADER] = address;
      else delete req.headers[CLIENT_ADDRESS_HEADER];
      relativeRedirects(res);
      pages(req, res);
    }
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
  const { refreshChangedHealthScores } = await import("../server/services/health");
  const { log } = await import("../server/observability/logger");
  refreshChangedHealthScores().catch((error: unknown) => log().error({ err: error }, "health refresh failed"));

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      console.error(`${signal} again: exiting without a clean shutdown`);
      process.exit(1);
    }
    stopping = true;
    console.log(`${signal}: finishing requests in flight, then closing the database`);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const force = setTimeout(() => server.closeAllConnections(), 10_000);
    await closed;
    clearTimeout(force);
    await app.close().catch(() => undefined);
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
