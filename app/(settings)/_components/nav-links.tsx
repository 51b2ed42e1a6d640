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
  { href: "/settings/security/sso", label: "Single sign-on", needs: "sso" },
  { href: "/settings/audit", label: "Audit trail", needs: "audit" },
];

/**
 * The settings navigation, marking the current section with `aria-current="page"`; the audit trail and single
 * sign-on only for the roles that may see them.
 */
export function SettingsNav({ canSeeAudit, canSeeSso = false }: { canSeeAudit: boolean; canSeeSso?: boolean }) {
  const pathname = usePathname();
  const shown = LINKS.filter((link) => (link.needs !== "audit" || canSeeAudit) && (link.needs !== "sso" || canSeeSso));
  // The longest link the path is under is the current one: /settings/security/sso is not also Security.
  const section = shown
    .filter((link) => link.href !== "/settings" && (pathname === link.href || pathname.startsWith(`${link.href}/`)))
    .sort((a, b) => b.href.length - a.href.length)[0]?.href;
  return (
    <nav aria-label="Settings">
      <ul className="nav-list">
        {shown.map((link) => {
          const current = link.href === "/settings" ? pathname === "/settings" : link.href === section || undefined;
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
