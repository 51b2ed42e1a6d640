import { after } from "next/server";
import { handleFetchRequest } from "../../../../server/http/fetch";
import { auditWritten } from "../../../../server/platform/request-log/record";
import { dispatchesSettled } from "../../../../server/webhooks/hand-over";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Every method of `/api/v1` and everything under it goes through the REST facade's pipeline (docs/architecture.md,
 * "Layers and the request pipeline") when the app runs on a platform's own Next.js server (Vercel); `npm start` serves
 * `/api/v1` before Next.js sees it (scripts/serve.ts). `after()` keeps the request's audit batch and its outbox
 * hand-over to Inngest alive past the response, so serverless hosts do not freeze before they finish.
 */
async function handle(req: Request): Promise<Response> {
  const response = await handleFetchRequest(req);
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
