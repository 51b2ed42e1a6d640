import type { ReactNode } from "react";

export const metadata = { title: "MSP CRM API", description: "Public API of the MSP CRM" };

const styles = `
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1a1a1a; line-height: 1.5; }
main { max-width: 56rem; margin: 0 auto; padding: 1.5rem 1rem 4rem; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; }
pre { background: #f4f4f5; padding: 0.75rem; overflow-x: auto; border-radius: 6px; }
a { color: #0b57d0; }
section { border-top: 1px solid #e4e4e7; padding-top: 0.5rem; margin-top: 1rem; }
`;

/** Root layout: no external fonts or scripts (issue #6). */
export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <head>
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <style>{styles}</style>
      </head>
      <body>
        <main>{children}</main>
      </body>
    </html>
  );
}
