import { toFetchResponse } from "../../server/http/fetch";
import { readinessReply } from "../../server/http/probes";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * `GET /readyz` where Next.js alone serves the app (Vercel): 200 when the database and the key-value store answer and
 * the migrations are applied, else 503 with the reason, as `npm start` answers it before Next.js (docs/architecture.md,
 * "Running in production").
 */
export async function GET(): Promise<Response> {
  return toFetchResponse(await readinessReply());
}
