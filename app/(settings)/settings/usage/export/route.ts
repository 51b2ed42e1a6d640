import { TRPCError } from "@trpc/server";
import { createSettingsCaller } from "../../../../../server/settings/router";
import { isApiError, settingsErrorMessage } from "../../../../../server/settings/trpc";
import { settingsRequestFrom } from "../../../_lib/session";
import { usageParams } from "../params";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const STATUS: Partial<Record<TRPCError["code"], number>> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  BAD_REQUEST: 400,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  SERVICE_UNAVAILABLE: 503,
};

/**
 * `GET /settings/usage/export`: the usage page's request log as a CSV download (docs/architecture.md, "Usage: the
 * roll-up, the chart and the export"), for the page's range and filters (its query string), authenticated by the
 * session cookie with the page's role rules (every role, docs/api-contract.md §5.10). The rows stream as they are
 * read, a page of 1,000 at a time; a client that goes away stops the reading. A refusal (signed out 401, not a member
 * 403, a range over 90 days or a bad filter 422, the organisation's slots for expensive work all taken 429,
 * docs/api-contract.md §8.5) is a plain-text answer naming the reason. Only GET is served: it
 * changes nothing, so like every settings GET it needs the session cookie (SameSite=Lax) and no Origin check, and a
 * page of another site cannot read what it answers.
 */
export async function GET(req: Request): Promise<Response> {
  const params = usageParams(Object.fromEntries(new URL(req.url).searchParams));
  const caller = createSettingsCaller({ request: settingsRequestFrom(req.headers) });
  try {
    const { filename, open } = await caller.usage.export({
      from: params.from,
      to: params.to,
      apiKeyId: params.key || undefined,
      status: params.status || undefined,
      method: (params.method || undefined) as "GET" | undefined,
      path: params.path || undefined,
    });
    const body = await open();
    // Next.js cancels the body when the client disconnects; the signal covers hosts that only abort the request.
    req.signal.addEventListener("abort", () => void body.cancel().catch(() => undefined), { once: true });
    return new Response(body, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${filename}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  } catch (error) {
    // Opening the download (a slot for expensive work) throws our ApiError itself, outside the procedure.
    const status = (error instanceof TRPCError && STATUS[error.code]) || (isApiError(error) && error.status) || 500;
    const retryAfter = isApiError(error) ? error.headers?.["Retry-After"] : undefined;
    return new Response(`${settingsErrorMessage(error)}\n`, {
      status,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "cache-control": "no-store",
        ...(retryAfter ? { "retry-after": retryAfter } : {}),
      },
    });
  }
}
