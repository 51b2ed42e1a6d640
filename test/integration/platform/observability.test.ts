// What an operator sees of `npm start` (docs/architecture.md, "Observability"): one JSON log line per request, API and
// pages alike, with nothing secret in the output whatever a client sends; with OpenTelemetry on, spans and metrics at
// an OTLP receiver and Prometheus text on METRICS_PORT. Two servers on the test database: one with the defaults
// (telemetry off), one exporting to an in-process receiver. Needs a production build (`npm test` makes one first).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FULL_ACCESS_SCOPES } from "../../../server/platform/api-keys/scopes";
import { client, createTestOrg } from "../../helpers/api";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../helpers/otlp-receiver";
import { freePort } from "../../helpers/ports";
import { type FakeInngest, type Receiver, startFakeInngest, startReceiver } from "../../helpers/receiver";

const root = path.resolve(import.meta.dirname, "../../..");
const dataDir = mkdtempSync(path.join(tmpdir(), "crm-obs-"));
const METRICS_TOKEN = "metrics-token-0123456789abcdef";

interface Started {
  child: ChildProcess;
  base: string;
  output: () => string;
}

/** `npm start` on the test database with `env`, in its own process group, once `/api/v1/status` answers. */
async function start(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn("npm", ["start"], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      WEBHOOKS_ALLOW_LOOPBACK: "true",
      LOG_LEVEL: "info",
      ...env,
    },
    detached: true,
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const ready = await fetch(`${base}/api/v1/status`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { child, base, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`npm start did not become ready:\n${output.slice(-2_000)}`);
}

function stop(server: Started | undefined): void {
  if (server?.child.pid && server.child.exitCode === null) {
    try {
      process.kill(-server.child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** The JSON lines of a server's output (the start-up banner is text and is skipped). */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends `text` as it is on a new connection to `base` and returns everything the server answers. */
function rawRequest(base: string, text: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = connect(Number(port), hostname, () => socket.write(text));
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

/** Every span below `span` in its trace. */
function descendants(spans: readonly ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const children = spans.filter((other) => other.traceId === span.traceId && other.parentSpanId === span.spanId);
  return children.flatMap((child) => [child, ...descendants(spans, child)]);
}

let plain: Started | undefined;
let traced: Started | undefined;
let otlp: OtlpReceiver;
let hooks: Receiver;
let inngestApi: FakeInngest;
let org: Awaited<ReturnType<typeof createTestOrg>>;
let accountId = "";
let metricsUrl = "";

beforeAll(async () => {
  expect(existsSync(path.join(root, ".next", "BUILD_ID")), "run `npm run build` first").toBe(true);
  // An organisation exists before start-up, so the servers seed no demo organisation (and print no demo key).
  org = await createTestOrg(FULL_ACCESS_SCOPES);
  [otlp, hooks, inngestApi] = await Promise.all([startOtlpReceiver(), startReceiver(), startFakeInngest()]);
  const metricsPort = await freePort();
  [plain, traced] = await Promise.all([
    start({}),
    start({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "crm-under-test",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      METRICS_PORT: String(metricsPort),
      METRICS_TOKEN,
      // Inngest in development mode (unsigned calls to /api/inngest), its event API a stand-in.
      INNGEST_DEV: inngestApi.url,
      // The spans asserted include the rate limit's Redis script: on this shared machine a first script call can take
      // longer than the default 250 ms bound, and the limiter would then count in memory for a second (no Redis span).
      KV_TIMEOUT_MS: "2000",
    }),
  ]);
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const created = await client(`${plain.base}/api/v1`, org.key)("POST", "/accounts", { name: "Northwind Dental" });
  accountId = created.body.data.id;
}, 180_000);

afterAll(async () => {
  stop(plain);
  stop(traced);
  await Promise.all([otlp?.close(), hooks?.close(), inngestApi?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("request log (telemetry off, the default)", () => {
  it("writes one JSON line per request, API and pages, with its fields and no secret a client sent", async () => {
    const server = plain as Started;
    const api = `${server.base}/api/v1`;
    const password = "Correct-Horse-Battery-9";
    const cookie = "msp_session=c00k1e-value-that-must-not-be-logged";
    const sent: Array<{ id: string; status: number; route: string | null; authenticated: boolean }> = [];
    const record = (res: Response, route: string | null, authenticated: boolean) => {
      sent.push({ id: res.headers.get("x-request-id") ?? "", status: res.status, route, authenticated });
      return res;
    };
    const auth = { Authorization: `Bearer ${org.key}` };
    const json = { ...auth, "Content-Type": "application/json" };

    // The key in the header, in the query string and in a body; a webhook secret in an answer; a password and a
    // session cookie sent to the pages; a record id in a page path.
    record(await fetch(`${api}/accounts/${accountId}`, { headers: auth }), "/api/v1/accounts/{id}", true);
    record(await fetch(`${api}/accounts?api_key=${org.key}`, { headers: auth }), "/api/v1/accounts", true);
    record(await fetch(`${api}/accounts?api_key=${org.key}`), "/api/v1/accounts", false);
    record(
      await fetch(`${api}/accounts`, { method: "POST", headers: json, body: JSON.stringify({ name: org.key }) }),
      "/api/v1/accounts",
      true,
    );
    record(
      await fetch(`${api}/accounts`, { method: "POST", headers: json, body: JSON.stringify({ apiKey: org.key }) }),
      "/api/v1/accounts",
      true,
    );
    const endpoint = record(
      await fetch(`${api}/webhook-endpoints`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ url: hooks.url, events: ["*"] }),
      }),
      "/api/v1/webhook-endpoints",
      true,
    );
    const { secret, id: endpointId } = (await endpoint.json()).data as { secret: string; id: string };
    expect(secret).toMatch(/^whsec_/);
    const rotated = record(
      await fetch(`${api}/webhook-endpoints/${endpointId}/rotate-secret`, { method: "POST", headers: auth }),
      "/api/v1/webhook-endpoints/{id}/rotate-secret",
      true,
    );
    const newSecret = ((await rotated.json()).data as { secret: string }).secret;
    record(
      await fetch(`${server.base}/signin`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
        body: new URLSearchParams({ email: "someone@example.com", password }).toString(),
        redirect: "manual",
      }),
      "/signin",
      false,
    );
    record(
      await fetch(`${server.base}/settings/webhooks/wh_recordid42`, {
        headers: { Cookie: cookie },
        redirect: "manual",
      }),
      "/settings/webhooks/{id}",
      false,
    );
    record(await fetch(`${api}/no-such-thing/${org.key}`), null, false);
    // A request Node cannot parse is answered (and logged) before any route.
    const raw = await rawRequest(server.base, `BREW /api/v1/accounts?api_key=${org.key} HTTP/1.1\r\nHost: x\r\n\r\n`);
    sent.push({
      id: /x-request-id: (\S+)/i.exec(raw)?.[1] ?? "",
      status: Number(raw.split(" ")[1]),
      route: null,
      authenticated: false,
    });

    const lines = await until(() => {
      const found = jsonLines(server.output()).filter((line) => line.msg === "request");
      return sent.every((request) => found.some((line) => line.requestId === request.id)) ? found : undefined;
    }, "a log line for every request");
    for (const request of sent) {
      expect(request.id).toMatch(/^req_[0-9a-f]{24}$/);
      const mine = lines.filter((line) => line.requestId === request.id);
      expect(mine, `lines of ${request.route}`).toHaveLength(1);
      const line = mine[0] as Record<string, unknown>;
      expect(line).toMatchObject({ level: "info", route: request.route, status: request.status });
      expect(Date.parse(String(line.time))).not.toBeNaN();
      expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(typeof line.method).toBe("string");
      expect(line.durationMs).toBeGreaterThanOrEqual(0);
      expect(line.orgId).toBe(request.authenticated ? org.orgId : null);
      expect(line.apiKeyId).toBe(request.authenticated ? org.apiKeyId : null);
      // Tracing is off: no trace ids.
      expect(line).not.toHaveProperty("trace_id");
    }
    const refused = lines.find((line) => line.requestId === sent[2]?.id);
    expect(refused).toMatchObject({ status: 401, errorCode: "unauthorized" });
    const unparsed = lines.find((line) => line.requestId === sent.at(-1)?.id);
    expect(unparsed).toMatchObject({ status: 400, errorCode: "bad_request", method: "_OTHER", route: null });

    const output = server.output();
    for (const secretText of [
      org.key,
      org.key.slice("msp_test_".length),
      secret,
      newSecret,
      password,
      "c00k1e-value",
      "wh_recordid42",
      "api_key=",
    ]) {
      expect(output, `the output contains ${secretText}`).not.toContain(secretText);
    }
  });

  it("serves no metrics when METRICS_PORT is unset, and never on the public port", async () => {
    const server = plain as Started;
    const res = await fetch(`${server.base}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("http_server_request_duration");
  });
});

describe("OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT and METRICS_PORT set)", () => {
  it("exports a server span per request named by its route template, with the pipeline's steps, a database span and a Redis span inside", async () => {
    const server = traced as Started;
    const res = await fetch(`${server.base}/api/v1/accounts/${accountId}`, {
      headers: { Authorization: `Bearer ${org.key}` },
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get("x-request-id");
    const span = await until(
      () => otlp.spans.find((candidate) => candidate.attributes["crm.request_id"] === requestId),
      "the request's span",
    );
    expect(span).toMatchObject({
      name: "GET /api/v1/accounts/{id}",
      kind: 2,
      serviceName: "crm-under-test",
      attributes: {
        "http.request.method": "GET",
        "http.route": "/api/v1/accounts/{id}",
        "http.response.status_code": 200,
        "crm.org_id": org.orgId,
        "crm.api_key_id": org.apiKeyId,
      },
    });
    expect(span.parentSpanId).toBe("");
    const inside = await until(() => {
      const found = descendants(otlp.spans, span);
      return found.some(
        (child) =>
          child.name === "prisma:client:db_query" && /"Account"/.test(String(child.attributes["db.query.text"])),
      )
        ? found
        : undefined;
    }, "the database span of the account's query");
    const steps = inside.filter((child) => child.parentSpanId === span.spanId).map((child) => child.name);
    expect(steps).toEqual(
      expect.arrayContaining(["pipeline.route", "pipeline.identify", "pipeline.rateLimit", "pipeline.callProcedure"]),
    );
    // The account's query is inside the procedure's step.
    const procedure = inside.find((child) => child.name === "pipeline.callProcedure") as ReceivedSpan;
    expect(descendants(otlp.spans, procedure)).toContainEqual(
      expect.objectContaining({
        name: "prisma:client:db_query",
        kind: 3,
        attributes: expect.objectContaining({
          "db.query.text": expect.stringMatching(/FROM "Account" WHERE "orgId" = \$1/),
        }),
      }),
    );
    expect(inside).toContainEqual(
      expect.objectContaining({ name: "evalsha", scope: "@opentelemetry/instrumentation-ioredis", kind: 3 }),
    );
    // Nothing names the record: the span is found by its route and request id.
    expect(span.name).not.toContain(accountId);

    // The request's log line carries its trace.
    const line = await until(
      () => jsonLines(server.output()).find((candidate) => candidate.requestId === requestId),
      "the log line",
    );
    expect(line).toMatchObject({ trace_id: span.traceId, span_id: span.spanId, route: "/api/v1/accounts/{id}" });
  });

  it("traces pages under their route template and a webhook delivery attempt as a client span", async () => {
    const server = traced as Started;
    const page = await fetch(`${server.base}/settings/webhooks/wh_recordid42`, { redirect: "manual" });
    const pageId = page.headers.get("x-request-id");
    expect(pageId).toMatch(/^req_/);
    const pageSpan = await until(
      () => otlp.spans.find((candidate) => candidate.attributes["crm.request_id"] === pageId),
      "the page's span",
    );
    expect(pageSpan).toMatchObject({ name: "GET /settings/webhooks/{id}", kind: 2 });

    const api = client(`${server.base}/api/v1`, org.key);
    const endpoint = await api("POST", "/webhook-endpoints", { url: hooks.url, events: ["*"] });
    const test = await api("POST", `/webhook-endpoints/${endpoint.body.data.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body.data.attempt.success).toBe(true);
    const requestSpan = await until(
      () => otlp.spans.find((candidate) => candidate.attributes["crm.request_id"] === test.headers.get("x-request-id")),
      "the test request's span",
    );
    expect(requestSpan.name).toBe("POST /api/v1/webhook-endpoints/{id}/test");
    const attempt = await until(
      () => descendants(otlp.spans, requestSpan).find((child) => child.name === "webhook.delivery_attempt"),
      "the delivery attempt's span",
    );
    expect(attempt).toMatchObject({
      kind: 3,
      attributes: {
        "crm.webhook.outcome": "success",
        "crm.webhook.mode": "single",
        "http.response.status_code": 200,
        "server.address": "127.0.0.1",
      },
    });
  });

  it("traces an Inngest function run inside the request that ran it, named after the function", async () => {
    const server = traced as Started;
    const event = {
      name: "crm/webhook.delivery.requested",
      data: { deliveryId: "whd_none", endpointId: "e", orgId: "o" },
    };
    const res = await fetch(`${server.base}/api/inngest?fnId=msp-crm-webhook-deliver&stepId=step`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        version: 1,
        event,
        events: [event],
        steps: {},
        ctx: { run_id: "01RUNFORTHETEST", attempt: 0, stack: { stack: [], current: 0 } },
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ deliveryId: "whd_none", skipped: "not found" });
    const requestSpan = await until(
      () => otlp.spans.find((candidate) => candidate.attributes["crm.request_id"] === res.headers.get("x-request-id")),
      "the run request's span",
    );
    expect(requestSpan.name).toBe("POST /api/inngest");
    const run = await until(
      () => descendants(otlp.spans, requestSpan).find((child) => child.name.startsWith("inngest.execution")),
      "the run's span",
    );
    expect(run).toMatchObject({
      name: "inngest.execution webhook-deliver",
      attributes: {
        "inngest.function.id": "webhook-deliver",
        "inngest.run.id": "01RUNFORTHETEST",
        "inngest.attempt": 0,
      },
    });
    // The function's database work is inside its run.
    await until(
      () => descendants(otlp.spans, run).find((child) => child.name === "prisma:client:db_query"),
      "the run's query",
    );
  });

  it("exports the request-duration histogram by route template and the outbox gauges over OTLP", async () => {
    const point = await until(
      () =>
        otlp.points.find(
          (candidate) =>
            candidate.metric === "http.server.request.duration" &&
            candidate.attributes["http.route"] === "/api/v1/accounts/{id}" &&
            candidate.attributes["http.response.status_code"] === 200,
        ),
      "http.server.request.duration",
    );
    expect(point).toMatchObject({ unit: "s", attributes: { "http.request.method": "GET" } });
    expect(point.value).toBeGreaterThanOrEqual(1);
    await until(() => otlp.points.find((candidate) => candidate.metric === "crm.outbox.backlog"), "crm.outbox.backlog");
    await until(
      () => otlp.points.find((candidate) => candidate.metric === "crm.webhook.delivery_attempt.duration"),
      "crm.webhook.delivery_attempt.duration",
    );
    // Labels carry templates, never ids.
    for (const received of otlp.points) {
      expect(JSON.stringify(received.attributes)).not.toContain(accountId);
    }
  });

  it("serves Prometheus text on METRICS_PORT to the bearer of METRICS_TOKEN only: requests by route template, refusals, deliveries, outbox", async () => {
    const server = traced as Started;
    // One refusal: a key allowed one request a minute, used twice.
    const limited = await createTestOrg(FULL_ACCESS_SCOPES, { limits: { perKey: 1, perOrg: 100 } });
    const api = client(`${server.base}/api/v1`, limited.key);
    expect((await api("GET", "/accounts")).status).toBe(200);
    expect((await api("GET", "/accounts")).status).toBe(429);

    expect((await fetch(metricsUrl)).status).toBe(401);
    expect((await fetch(metricsUrl, { headers: { Authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    expect((await fetch(metricsUrl.replace("/metrics", "/other"))).status).toBe(404);
    const text = await until(async () => {
      const res = await fetch(metricsUrl, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      const body = await res.text();
      return body.includes("crm_rate_limit_refusals") ? body : undefined;
    }, "the refusal in /metrics");
    expect(text).toMatch(
      /^http_server_request_duration_bucket\{[^}]*http_route="\/api\/v1\/accounts\/\{id\}"[^}]*\} \d+/m,
    );
    expect(text).toMatch(/^http_server_request_duration_count\{[^}]*http_route="\/settings\/webhooks\/\{id\}"/m);
    expect(text).toMatch(/^crm_rate_limit_refusals_total\{[^}]*crm_rate_limit_subject="key"[^}]*\} [1-9]/m);
    expect(text).toMatch(
      /^crm_webhook_delivery_attempt_duration_count\{[^}]*crm_webhook_outcome="success"[^}]*\} [1-9]/m,
    );
    expect(text).toMatch(/^crm_outbox_backlog\{[^}]*\} \d+$/m);
    expect(text).toMatch(/^crm_outbox_oldest_age\{[^}]*\} [\d.e+-]+$/m);
    expect(text).toContain("# UNIT http_server_request_duration s");
    expect(text).not.toContain(accountId);
    expect(text).not.toContain("wh_recordid42");
    // The public port does not serve them.
    expect((await fetch(`${server.base}/metrics`)).status).toBe(404);
  });
});
