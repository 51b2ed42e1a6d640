"use client";

import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/settings", label: "Overview" },
  { href: "/settings/keys", label: "API keys" },
  { href: "/settings/webhooks", label: "Webhooks" },
  { href: "/settings/usage", label: "Usage" },
];

/** The settings navigation, marking the current section with `aria-current="page"`. */
export function SettingsNav() {
  const pathname = usePathname();
  return (
    <nav aria-label="Settings">
      <ul className="nav-list">
        {LINKS.map((link) => {
          const current =
            link.href === "/settings" ? pathname === "/settings" : pathname.startsWith(link.href) || undefined;
          return (
            <li key={link.href}>
              <a href={link.href} aria-current={current ? "page" : undefined}>
                {link.label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
