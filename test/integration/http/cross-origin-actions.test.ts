// A server action posted to the pages from another origin, through the wrapper `npm start` puts around Next.js, on a
// real HTTP server: 403 before Next.js is reached, and a warn line (never an error line); same-origin and origin-less
// posts, GETs and route handlers go on to Next.js (here a stand-in that says it was reached).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { observedPages, sameOriginActions } from "../../../server/http/pages";
import { captureLog } from "../../helpers/log-capture";

let server: Server;
let base = "";
let reached: string[] = [];

beforeAll(async () => {
  const pages = observedPages(
    sameOriginActions(async (req, res) => {
      reached.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "Content-Type": "text/plain" }).end("Next.js");
    }),
    () => "/settings/keys",
  );
  server = createServer(pages);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A server action as a browser posts it from a page (`Next-Action`, a fetch); `origin` null sends none. */
function action(path: string, origin: string | null) {
  const headers: Record<string, string> = {
    "Next-Action": "7f".repeat(21),
    "Content-Type": "text/plain;charset=UTF-8",
  };
  if (origin !== null) headers.Origin = origin;
  return fetch(`${base}${path}`, { method: "POST", headers, body: "[]" });
}

it("a server action from another origin is 403 without reaching Next.js, logged at warn level, never error", async () => {
  reached = [];
  const capture = captureLog("debug");
  try {
    for (const origin of ["https://evil.example", "null", `${base}.evil.example`]) {
      const refused = await action("/settings/keys", origin);
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await refused.text()).toBe("Forbidden: this form was posted from another site\n");
    }
    // A form posted without scripts (multipart, no Next-Action header) is a server action too.
    const form = new FormData();
    form.set("name", "CSRF key");
    const multipart = await fetch(`${base}/settings/keys`, {
      method: "POST",
      headers: { Origin: "https://evil.example" },
      body: form,
    });
    expect(multipart.status).toBe(403);
    expect(reached).toEqual([]);
    const lines = capture.lines();
    expect(lines.filter((line) => (line.level as string) === "error" || (line.level as string) === "fatal")).toEqual(
      [],
    );
    expect(lines.filter((line) => line.topic === "pages.cross-origin-action")).toEqual([
      expect.objectContaining({ level: "warn", origin: "https://evil.example", path: "/settings/keys" }),
    ]);
  } finally {
    capture.restore();
  }
});

it("a same-origin or origin-less action, a GET and a route handler's POST reach Next.js", async () => {
  reached = [];
  expect((await action("/settings/keys", base)).status).toBe(200);
  expect((await action("/settings/keys", null)).status).toBe(200);
  expect((await fetch(`${base}/settings/keys`, { headers: { Origin: "https://evil.example" } })).status).toBe(200);
  expect((await action("/api/trpc/me", "https://evil.example")).status).toBe(200);
  expect(reached).toEqual(["POST /settings/keys", "POST /settings/keys", "GET /settings/keys", "POST /api/trpc/me"]);
});
