import { readFile } from "node:fs/promises";
import path from "node:path";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// The single-file (UMD) browser build of @scalar/api-reference, installed with the app: the reference page loads it
// from here, never from a CDN.
const BUNDLE = path.join(process.cwd(), "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js");

let cached: Promise<Buffer> | undefined;

/** Serves the API reference renderer's browser bundle (`/docs/scalar.js`), cached for a day. */
export async function GET(): Promise<Response> {
  cached ??= readFile(BUNDLE).catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  const body = await cached;
  return new Response(new Uint8Array(body), {
    headers: {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=86400",
    },
  });
}
