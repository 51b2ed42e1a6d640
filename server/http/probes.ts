// The liveness and readiness probes an orchestrator or load balancer polls (docs/architecture.md,
// "Running in production"): plain JSON outside /api/v1, so they carry no envelope, are never rate-limited and write no
// audit row. `npm start` answers them before Next.js (scripts/serve.ts); on Vercel the route handlers app/livez and
// app/readyz do.
import { checkReadiness } from "../platform/status/service";
import type { Reply } from "./exchange";

/** The paths of the probes. */
export const PROBE_PATHS = ["/livez", "/readyz"] as const;

/** One of {@link PROBE_PATHS}. */
export type ProbePath = (typeof PROBE_PATHS)[number];

const HEADERS = { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" };

/** The probe a request target names (`/readyz?full` → `/readyz`), or null for any other path. */
export function probeOf(target: string): ProbePath | null {
  for (const probe of PROBE_PATHS) {
    if (target.startsWith(probe) && (target.length === probe.length || target[probe.length] === "?")) return probe;
  }
  return null;
}

/**
 * `GET /livez`: 200 `{"status":"live"}` while the process serves requests; nothing else is checked, so a database
 * outage never gets a healthy process restarted.
 */
export function livenessReply(): Reply {
  return { status: 200, headers: { ...HEADERS }, body: JSON.stringify({ status: "live" }) };
}

/**
 * `GET /readyz`: 200 `{"status":"ready","checks":{database,cache,migrations}}` when the database and the key-value
 * store answer and every migration of this build is applied; otherwise 503 with `status` `not_ready` (and the failed
 * checks) or `shutting_down`, and `reason`, e.g. `{"status":"not_ready","reason":"database: connection failed",…}`.
 * One check a second at most, shared by every caller (see `checkReadiness`).
 */
export async function readinessReply(): Promise<Reply> {
  const { ready, ...body } = await checkReadiness();
  return { status: ready ? 200 : 503, headers: { ...HEADERS }, body: JSON.stringify(body) };
}

/**
 * Answers a probe request: GET (and HEAD, without a body) with the probe's reply, any other method 405 with `Allow`.
 */
export async function probeReply(probe: ProbePath, method: string): Promise<Reply> {
  if (method !== "GET" && method !== "HEAD") {
    return {
      status: 405,
      headers: { ...HEADERS, Allow: "GET, HEAD" },
      body: JSON.stringify({ status: "method_not_allowed" }),
    };
  }
  const reply = probe === "/livez" ? livenessReply() : await readinessReply();
  return method === "HEAD" ? { ...reply, body: null } : reply;
}
