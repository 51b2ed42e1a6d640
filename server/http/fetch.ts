// The REST facade behind a fetch-style handler (Request → Response): what the Next.js route handlers use, where the
// platform gives no socket (serverless hosts such as Vercel; `npm start` serves /api/v1 through server/http/node.ts).
import type { ApiRequest, Reply } from "./exchange";
import { handleApiRequest } from "./pipeline";

async function readLimited(req: Request, limit: number): Promise<Uint8Array | null> {
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/** The {@link ApiRequest} of a fetch `Request`; `socketAddress` is null (the platform gives none). */
export function fromFetchRequest(req: Request): ApiRequest {
  const url = new URL(req.url);
  return {
    method: req.method,
    target: `${url.pathname}${url.search}`,
    header: (name) => req.headers.get(name) ?? undefined,
    // The platform joins repeats with ", ": the pipeline asks only about Authorization, and a comma is never part of
    // one Bearer credential (RFC 6750 b64token).
    repeated: (name) => req.headers.get(name)?.includes(",") ?? false,
    readBody: (limit) => readLimited(req, limit),
    socketAddress: null,
    encrypted: url.protocol === "https:",
  };
}

/** A fetch `Response` of a pipeline reply. */
export function toFetchResponse(reply: Reply): Response {
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** Serves one `/api/v1` request through the facade's pipeline (every layer on). Never throws. */
export async function handleFetchRequest(req: Request): Promise<Response> {
  return toFetchResponse(await handleApiRequest(fromFetchRequest(req)));
}
