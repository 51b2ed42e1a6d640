"use client";

import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/settings", label: "Overview" },
  { href: "/settings/keys", label: "API keys" },
  { href: "/settings/webhooks", label: "Webhooks" },
  { href: "/settings/fields", label: "Custom fields" },
  { href: "/settings/usage", label: "Usage" },
  { href: "/settings/team", label: "Team" },
  { href: "/settings/security", label: "Security" },
  { href: "/settings/audit", label: "Audit trail", needs: "audit" },
];

/**
 * The settings navigation, marking the current section with `aria-current="page"`; the audit trail only for the
 * roles that may see it.
 */
export function SettingsNav({ canSeeAudit }: { canSeeAudit: boolean }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Settings">
      <ul className="nav-list">
        {LINKS.filter((link) => link.needs !== "audit" || canSeeAudit).map((link) => {
          const current =
            link.href === "/settings" ? pathname === "/settings" : pathname.startsWith(link.href) || undefined;
          return (
            <li key={link.href}>
              <a href={link.href} aria-current={current ? "page" : undefined} data-label={link.label}>
                {link.label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
