// The SCIM door (docs/api-contract.md §11.5): `<origin>/api/auth/scim/v2/…` served on node:http before Next.js, as the
// OAuth doors are (server/mcp/oauth-http.ts), straight to the better-auth instance of the request's public origin,
// whose SCIM plugin authenticates the bearer token and answers. Around it: the request's client address and user agent
// for the audit entries a deprovisioning writes, a bound on the body, one log line, and a directory event for every
// refused request whose token names an organisation.
import type { IncomingMessage, ServerResponse } from "node:http";
import { prisma } from "../db/transaction";
import { AUTH_BASE_PATH, authFor } from "../identity/better-auth";
import { type DirectoryRequest, withDirectoryRequest } from "../identity/directory/context";
import { recordDirectoryEvent } from "../identity/directory/events";
import { SCIM_PATH } from "../identity/directory/plugin";
import { log } from "../observability/logger";
import { observeRequest } from "../observability/requests";
import { newRequestId } from "./envelope";
import { headerReader, webRequestOf } from "./node";
import { clientAddress, publicOrigin, stampClientAddress } from "./origin";
// Loads (and registers) the membership rules the plugin runs for every SCIM change.
import "../identity/directory/projection";

const PREFIX = `${AUTH_BASE_PATH}${SCIM_PATH}`;

/**
 * Most bytes of a SCIM request body: 1 MiB (1,048,576 bytes), room for a Group of the plugin's 1,000 members; a larger
 * body is answered 413 before it is held in memory.
 * Source: docs/api-contract.md §11.5.
 */
export const MAX_SCIM_BODY_BYTES = 1024 * 1024;

function pathOf(target: string): string {
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** Whether a request target is the SCIM door's: `/api/auth/scim/v2` and below (docs/api-contract.md §11.5). */
export function isScimTarget(target: string): boolean {
  const path = pathOf(target);
  return path === PREFIX || path.startsWith(`${PREFIX}/`);
}

/** The route a log line and an event name: a resource's id as a parameter (`/api/auth/scim/v2/Users/{id}`). */
function routeOf(path: string): string {
  return path.replace(/^(.*\/scim\/v2\/(?:Users|Groups|Schemas|ResourceTypes))\/[^/]+$/, "$1/{id}");
}

function scimError(status: number, detail: string): Response {
  return new Response(
    JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status), detail }),
    { status, headers: { "Content-Type": "application/scim+json", "Cache-Control": "no-store" } },
  );
}

/** The organisation of a bearer token's credential (`ba_scim_credential_….secret`), whoever it was issued to. */
async function organisationOfToken(authorization: string | undefined): Promise<string | null> {
  const credentialId = /^Bearer\s+(ba_scim_credential_[A-Za-z0-9_-]+)\./i.exec(authorization ?? "")?.[1];
  if (!credentialId) return null;
  const credential = await prisma().scimManagedCredential.findUnique({
    where: { credentialId },
    select: { connection: { select: { provisioningDomainId: true } } },
  });
  return credential?.connection.provisioningDomainId ?? null;
}

async function detailOf(response: Response): Promise<string> {
  try {
    const body = (await response.clone().json()) as { detail?: unknown; message?: unknown };
    const detail = typeof body.detail === "string" ? body.detail : body.message;
    return typeof detail === "string" ? detail.slice(0, 500) : `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/**
 * Records what a refused SCIM request leaves for the directory page: the refusals found inside its rolled-back
 * transaction, and a `request.failed` event (method, route, status, the SCIM error's detail). Not for 401 (a token
 * that names nobody), 429, or a GET answered 404. Never throws.
 */
async function recordRefusal(req: IncomingMessage, context: DirectoryRequest, response: Response): Promise<void> {
  if (response.status < 400 || response.status === 401 || response.status === 429) return;
  // A directory looks a resource up before changing it: a GET of one it deleted is not a failure.
  if (req.method === "GET" && response.status === 404) return;
  try {
    const orgId = context.orgId ?? (await organisationOfToken(req.headers.authorization));
    for (const refusal of context.refusals) {
      await recordDirectoryEvent(refusal.orgId, {
        action: refusal.action,
        target: refusal.target,
        outcome: "error",
        details: refusal.details,
      });
    }
    if (!orgId) return;
    await recordDirectoryEvent(orgId, {
      action: "request.failed",
      target: routeOf(pathOf(req.url ?? "/")),
      outcome: "error",
      details: { method: req.method ?? "GET", status: response.status, detail: await detailOf(response) },
    });
  } catch (error) {
    log().warn({ err: error }, "directory event of a refused SCIM request not recorded");
  }
}

async function answer(req: IncomingMessage, context: DirectoryRequest): Promise<Response> {
  const origin = publicOrigin(headerReader(req));
  // better-auth's rate limits count the address the listener stamped.
  stampClientAddress(req.headers, req.socket.remoteAddress ?? null);
  const request = await webRequestOf(req, `${origin}${req.url ?? PREFIX}`, MAX_SCIM_BODY_BYTES);
  if (!request) return scimError(413, `The body exceeds ${MAX_SCIM_BODY_BYTES} bytes`);
  const response = await withDirectoryRequest(context, () => authFor(origin).handler(request));
  await recordRefusal(req, context, response);
  return response;
}

/**
 * The node:http listener of the SCIM door (`npm start`, scripts/serve.ts; the tests' server): better-auth's SCIM
 * endpoints with the request's address and user agent in {@link withDirectoryRequest}; 413 for a body over
 * {@link MAX_SCIM_BODY_BYTES} (the connection then closes); 500 (a SCIM error) if anything throws. Never throws.
 * Source: docs/api-contract.md §11.5.
 */
export function scimListener(req: IncomingMessage, res: ServerResponse): void {
  const read = headerReader(req);
  const requestId = newRequestId();
  const observation = observeRequest(requestId, req.method ?? "GET", read);
  const route = routeOf(pathOf(req.url ?? "/"));
  const context: DirectoryRequest = {
    ip: clientAddress(read, req.socket.remoteAddress ?? null),
    userAgent: read("user-agent") ?? null,
    refusals: [],
  };
  observation
    .run(() => answer(req, context))
    .catch((error: unknown) => {
      log().error({ requestId, err: error, path: route }, "SCIM request failed; answered 500");
      return scimError(500, "Internal error");
    })
    .then(async (response) => {
      res.statusCode = response.status;
      response.headers.forEach((value, name) => {
        if (name !== "set-cookie") res.setHeader(name, value);
      });
      res.setHeader("X-Request-Id", requestId);
      const body = Buffer.from(await response.arrayBuffer());
      observation.end({ route, status: response.status });
      // The rest of a body over the bound is never read: the connection closes after the answer.
      if (response.status === 413) {
        res.setHeader("Connection", "close");
        res.end(body, () => res.socket?.destroy());
      } else {
        res.end(body);
      }
    })
    .catch(() => res.destroy());
}
