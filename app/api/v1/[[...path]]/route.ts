import { after } from "next/server";
import { auditWritten } from "@/server/http/audit";
import { handleApiRequest } from "@/server/http/handler";
import { dispatchesSettled } from "@/server/webhooks/dispatch";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Every method of `/api/v1` and everything under it goes through the REST facade (DESIGN.md §2). `after()` keeps the
 * request's audit batch and its outbox hand-over to Inngest alive past the response: on `next start` a SIGTERM waits
 * for them before exiting, and on serverless hosts the function is not frozen before they finish.
 */
async function handle(req: Request): Promise<Response> {
  const response = await handleApiRequest(req);
  after(auditWritten);
  after(dispatchesSettled);
  return response;
}

export {
  handle as DELETE,
  handle as GET,
  handle as HEAD,
  handle as OPTIONS,
  handle as PATCH,
  handle as POST,
  handle as PUT,
};
