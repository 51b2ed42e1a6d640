import type { ReactNode } from "react";
import { SettingsNav } from "../_components/nav-links";
import { signOut } from "../_lib/auth-actions";
import { currentSession } from "../_lib/session";

export const dynamic = "force-dynamic";

/**
 * Settings chrome: the organisation and user signed in, the section navigation and sign-out. Without a session it
 * renders the page alone: each page redirects to sign-in with its own path as `next` (a layout does not know it).
 */
export default async function SettingsLayout({ children }: { children: ReactNode }) {
  const session = await currentSession();
  if (!session) return children;
  return (
    <>
      <div className="settings-bar">
        <SettingsNav />
        <div className="who">
          <span>
            <strong data-testid="org-name">{session.orgName}</strong> · {session.email}
          </span>
          <form action={signOut} className="inline-form">
            <button type="submit" className="secondary">
              Sign out
            </button>
          </form>
        </div>
      </div>
      {children}
    </>
  );
}
