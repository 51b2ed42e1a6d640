import type { ReactNode } from "react";
import "./globals.css";

export const metadata = { title: "MSP CRM API", description: "Public API of the MSP CRM" };

/**
 * Root layout: a skip link, the site header and the page. No external fonts or scripts (docs/architecture.md,
 * "Settings: sign-in, team and roles"); styles are `app/globals.css`.
 */
export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta name="viewport" content="width=device-width, initial-scale=1" />
      </head>
      <body>
        <a className="skip-link" href="#content">
          Skip to content
        </a>
        <header className="site-header">
          <div className="site-header-inner">
            <a className="brand" href="/">
              MSP CRM API
            </a>
            <nav aria-label="Site">
              <ul className="nav-list">
                <li>
                  <a href="/docs">API reference</a>
                </li>
                <li>
                  <a href="/docs/errors">Error codes</a>
                </li>
                <li>
                  <a href="/docs/webhooks">Webhooks guide</a>
                </li>
                <li>
                  <a href="/docs/sync">Sync guide</a>
                </li>
                <li>
                  <a href="/settings">Settings</a>
                </li>
              </ul>
            </nav>
          </div>
        </header>
        <main id="content" tabIndex={-1}>
          {children}
        </main>
      </body>
    </html>
  );
}
