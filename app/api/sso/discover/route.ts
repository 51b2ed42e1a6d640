import { DiscoverRequestSchema, discoverSignIn } from "../../../../server/identity/sso/discover";
import { settingsRequestFrom } from "../../../(settings)/_lib/session";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Largest body read: 4 KiB. */
const BODY_MAX_BYTES = 4096;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { "cache-control": "no-store", ...headers } });
}

/**
 * `POST /api/sso/discover` `{ "email": "ana@acme.example" }` (docs/api-contract.md §11.4): 200
 * `{ method: "sso" | "password", redirectTo: string | null }`, the same shape whether or not the email's domain has a
 * provider; for `sso` the answer sets better-auth's state cookie and the browser goes to `redirectTo`. 400
 * `{ error: { code: "validation_error", message } }` for a body that is not JSON with an `email` string (or larger than
 * 4 KiB); 429 `rate_limited` with `Retry-After` past the address's anonymous window.
 */
export async function POST(req: Request): Promise<Response> {
  const text = await req.text();
  let parsed: ReturnType<typeof DiscoverRequestSchema.safeParse> | null = null;
  if (Buffer.byteLength(text) <= BODY_MAX_BYTES) {
    try {
      parsed = DiscoverRequestSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = null;
    }
  }
  if (!parsed?.success) {
    return json(400, { error: { code: "validation_error", message: "Send a JSON body with an email string" } });
  }
  const result = await discoverSignIn(settingsRequestFrom(req.headers), parsed.data.email);
  if ("limited" in result) {
    const message = `Too many requests from this address; retry in ${result.limited} seconds`;
    return json(429, { error: { code: "rate_limited", message } }, { "retry-after": String(result.limited) });
  }
  const response = json(200, result.answer);
  for (const cookie of result.setCookies) response.headers.append("set-cookie", cookie);
  return response;
}
