import { toFetchResponse } from "../../server/http/fetch";
import { livenessReply } from "../../server/http/probes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /livez` where Next.js alone serves the app (Vercel): 200 `{"status":"live"}`, as `npm start` answers it before
 * Next.js (docs/architecture.md, "Running in production").
 */
export function GET(): Response {
  return toFetchResponse(livenessReply());
}
