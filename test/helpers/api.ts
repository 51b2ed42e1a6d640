// Test helpers: a real HTTP server around the REST facade, and organisations with keys made through the services.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SCOPES } from "../../server/auth/scopes";
import { handleApiRequest } from "../../server/http/handler";
import { createApiKey } from "../../server/services/api-keys";
import { ensureOrganisation } from "../../server/services/organisations";

/** A running HTTP server that serves `/api/v1` with the same handler Next.js mounts. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD" && chunks.length > 0;
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    res.setHeader(name, value);
  });
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Starts the REST facade on an ephemeral loopback port. */
export async function startApi(): Promise<TestServer> {
  let origin = "";
  const server = createServer((req, res) => {
    toRequest(req, origin)
      .then(handleApiRequest)
      .then((response) => send(res, response))
      .catch((error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/api/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Every grantable scope of spec §5. */
export const ALL_SCOPES = Object.keys(SCOPES);

/** A fresh organisation (unique slug) and one API key with the given scopes. */
export async function createTestOrg(
  scopes: readonly string[] = ALL_SCOPES.filter((scope) => scope.endsWith(":write")).concat("admin:read"),
  options: { isTest?: boolean } = {},
): Promise<{ orgId: string; slug: string; key: string; apiKeyId: string }> {
  const slug = `t-${randomBytes(6).toString("hex")}`;
  const org = await ensureOrganisation(slug);
  const { key, raw } = await createApiKey(org.id, { name: "test", scopes, isTest: options.isTest ?? false });
  return { orgId: org.id, slug, key: raw, apiKeyId: key.id };
}

/** Another key in an existing organisation. */
export async function createKey(orgId: string, scopes: readonly string[], isTest = false): Promise<string> {
  return (await createApiKey(orgId, { name: "test", scopes, isTest })).raw;
}

/** A minimal JSON client bound to a base URL and a key. */
export function client(baseUrl: string, key?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field with expect().
    const json: any = text ? JSON.parse(text) : undefined;
    return { status: response.status, headers: response.headers, body: json };
  };
}
