import { ApiReference } from "@scalar/nextjs-api-reference";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// Our links above the reference; Scalar offsets its sticky header and sidebar by --scalar-custom-header-height. The
// links wrap onto more rows on a narrow screen (none is cut off), and the script keeps the offset at the header's
// height as it changes.
const HEADER = `
    <style>
      :root { --scalar-custom-header-height: 3rem; }
      .docs-header { position: sticky; top: 0; z-index: 100; box-sizing: border-box; min-height: 3rem;
        display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem; padding: 0.6rem 1rem;
        font: 0.95rem/1.2 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
        background: #f4f4f5; border-bottom: 1px solid #d4d4d8; }
      .docs-header a { color: #0b57d0; }
      .docs-header a.brand { color: #18181b; font-weight: 700; text-decoration: none; }
      .docs-header a:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
    </style>
    <nav class="docs-header" aria-label="Site">
      <a class="brand" href="/">MSP CRM API</a>
      <a href="/docs/errors">Error codes</a>
      <a href="/docs/webhooks">Webhook verification</a>
      <a href="/docs/sync">Keeping a copy in sync</a>
      <a href="/docs/sdk">TypeScript client</a>
      <a href="/api/v1/openapi.json">OpenAPI 3.1 JSON</a>
      <a href="/api/v1/postman.json">Postman collection</a>
      <a href="/settings">Settings</a>
    </nav>
    <script>
      (() => {
        const header = document.querySelector(".docs-header");
        const offset = () =>
          document.documentElement.style.setProperty("--scalar-custom-header-height", header.offsetHeight + "px");
        new ResizeObserver(offset).observe(header);
      })();
    </script>`;

const render = ApiReference({
  url: "/api/v1/openapi.json",
  pageTitle: "MSP CRM API reference",
  // Served by app/docs/scalar.js/route.ts from the installed package: nothing is fetched from a CDN at run time.
  cdn: "/docs/scalar.js",
  withDefaultFonts: false,
  telemetry: false,
  // "Test request" goes straight to our own API, never through Scalar's hosted proxy (it would see the API key).
  proxyUrl: "",
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  hideClientButton: false,
  // About 50 operations: every one is listed in the sidebar at once.
  defaultOpenAllTags: true,
});

/**
 * The API reference: `@scalar/nextjs-api-reference` rendering `/api/v1/openapi.json`, with links to the
 * error codes and the webhook verification guide above it. No fonts or scripts from elsewhere.
 */
export async function GET(): Promise<Response> {
  const html = await render().text();
  const page = html.replace("<html>", '<html lang="en">').replace("<body>", `<body>${HEADER}`);
  return new Response(page, {
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache" },
  });
}
