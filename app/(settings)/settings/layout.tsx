import type { ReactNode } from "react";
import { organisationsOf } from "../../../server/identity/session";
import { SettingsNav } from "../_components/nav-links";
import { WebhookAlerts } from "../_components/webhook-alerts";
import { signOut, switchOrganisationAction } from "../_lib/auth-actions";
import { currentSettingsSession, settingsCaller } from "../_lib/session";

export const dynamic = "force-dynamic";

/**
 * Settings chrome: the organisation, the member and their role, the section navigation, an organisation switcher for
 * members of several, sign-out, and the banner of open webhook alerts. Without a membership it renders the page alone: each page redirects to sign-in
 * (or answers 403) with its own path.
 */
export default async function SettingsLayout({ children }: { children: ReactNode }) {
  const state = await currentSettingsSession();
  if (state.state !== "member") return children;
  const caller = await settingsCaller();
  const me = await caller.me();
  const [organisations, alerts] = await Promise.all([organisationsOf(me.user.id), caller.webhooks.alerts()]);
  return (
    <>
      <div className="settings-bar">
        <SettingsNav canSeeAudit={me.permissions["audit:read"]} canSeeSso={me.permissions["organization:update"]} />
        <div className="who">
          <span>
            <strong data-testid="org-name">{me.org.name}</strong> · {me.user.email} ·{" "}
            <span className="badge" data-testid="role">
              {me.role}
            </span>
          </span>
          {organisations.length > 1 ? (
            <form action={switchOrganisationAction} className="inline-form">
              <label htmlFor="switch-org">Organisation</label>{" "}
              <select id="switch-org" name="orgId" defaultValue={me.org.id}>
                {organisations.map((org) => (
                  <option key={org.id} value={org.id}>
                    {org.name}
                  </option>
                ))}
              </select>{" "}
              <button type="submit" className="secondary">
                Switch organisation
              </button>
            </form>
          ) : null}
          <form action={signOut} className="inline-form">
            <button type="submit" className="secondary">
              Sign out
            </button>
          </form>
        </div>
      </div>
      <WebhookAlerts alerts={alerts} />
      {children}
    </>
  );
}
