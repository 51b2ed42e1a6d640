import { after } from "next/server";
import { auditWritten } from "@/server/http/audit";
import { handleApiRequest } from "@/server/http/handler";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Every method of `/api/v1` and everything under it goes through the REST facade (DESIGN.md §2). `after()` keeps the
 * request's audit batch alive past the response: on `next start` a SIGTERM waits for it before exiting, and on
 * serverless hosts the function is not frozen before the row is stored.
 */
async function handle(req: Request): Promise<Response> {
  const response = await handleApiRequest(req);
  after(auditWritten);
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
