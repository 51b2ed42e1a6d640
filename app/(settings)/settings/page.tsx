import { requestOrigin, requireMember, settingsCaller } from "../_lib/session";

export const metadata = { title: "Settings · MSP CRM API" };

/**
 * The first screen after sign-in (docs/architecture.md, "Settings: sign-in, team and roles"): the organisation, what it
 * has set up (keys, endpoints, calls in the last 24 hours, rate-limit plan) and, while nothing is set up, the steps to
 * a first API call.
 */
export default async function SettingsOverview() {
  const me = await requireMember("/settings");
  const caller = await settingsCaller();
  const [keys, endpoints, lastDay, limits] = await Promise.all([
    caller.apiKeys.list(),
    caller.webhooks.list(),
    caller.usage.lastDay(),
    caller.usage.limits(),
  ]);
  const now = Date.now();
  const activeKeys = keys.filter((key) => !key.revokedAt && (!key.expiresAt || key.expiresAt.getTime() > now));
  const disabled = endpoints.filter((endpoint) => !endpoint.enabled);
  const base = await requestOrigin();
  // Only what the member's role may do is offered (docs/api-contract.md §5.10); the rest is named as someone else's.
  const canCreateKeys = me.permissions["apiKey:manageTest"];
  const canManageEndpoints = me.permissions["webhook:manage"];
  return (
    <>
      <h1>{me.org.name}</h1>
      <p>
        Signed in as {me.user.name ? `${me.user.name} (${me.user.email})` : me.user.email}, {me.role} of the
        organisation <code>{me.org.slug}</code>. Everything here belongs to it and only its members see it.
      </p>
      <div className="cards">
        <div className="card">
          <h2>API keys</h2>
          <p>
            <strong>{activeKeys.length}</strong> active ({keys.length} in total)
          </p>
          <a href="/settings/keys">{canCreateKeys ? "Manage keys" : "See the keys"}</a>
        </div>
        <div className="card">
          <h2>Webhooks</h2>
          <p>
            <strong>{endpoints.length}</strong> endpoints
            {disabled.length > 0 ? `, ${disabled.length} disabled` : ""}
          </p>
          <a href="/settings/webhooks">{canManageEndpoints ? "Manage endpoints" : "See the endpoints"}</a>
        </div>
        <div className="card">
          <h2>Usage</h2>
          <p>
            <strong>{lastDay.total}</strong> calls in the last 24 hours, {lastDay.errors} failed. Plan{" "}
            {limits.plan.toLowerCase()}: {limits.perKey} requests/min per key, {limits.perOrg} per organisation.
          </p>
          <p className="card-links">
            <a href="/settings/usage">See the usage</a>
            {/* The trail of who changed what is its own page, for the roles that may read it. */}
            {me.permissions["audit:read"] ? <a href="/settings/audit">See the audit trail</a> : null}
          </p>
        </div>
      </div>
      {disabled.length > 0 ? (
        <p role="status" className="alert warning">
          {disabled.length === 1 ? "One webhook endpoint is" : `${disabled.length} webhook endpoints are`} disabled:{" "}
          <a href="/settings/webhooks">review them</a>.
        </p>
      ) : null}
      <section aria-labelledby="start-heading">
        <h2 id="start-heading">{activeKeys.length === 0 ? "Get started" : "Quick reference"}</h2>
        <ol className="steps">
          <li>
            {canCreateKeys ? (
              <>
                <a href="/settings/keys">Create a test key</a> (<code>msp_test_…</code>): same data as live keys,
                flagged as test traffic, no webhook deliveries. It is shown once; copy it.
              </>
            ) : (
              <>
                Ask an owner, admin or developer of {me.org.name} for a test key (<code>msp_test_…</code>): your role (
                {me.role}) sees <a href="/settings/keys">the keys</a> but cannot create them.
              </>
            )}
          </li>
          <li>
            Call the API with it:
            <pre>
              <code>{`curl -s ${base}/api/v1/accounts?limit=5 \\\n  -H "Authorization: Bearer msp_test_…"`}</code>
            </pre>
          </li>
          <li>
            Read the <a href="/docs">API reference</a> (every operation with its scope) and the{" "}
            <a href="/docs/errors">error codes</a>.
          </li>
          <li>
            {canManageEndpoints ? (
              <>
                <a href="/settings/webhooks">Register a webhook endpoint</a> and send it a test event; verify signatures
              </>
            ) : (
              <>
                See the organisation's <a href="/settings/webhooks">webhook endpoints</a> and their deliveries; verify
                signatures
              </>
            )}{" "}
            with the <a href="/docs/webhooks">webhook guide</a>.
          </li>
        </ol>
      </section>
    </>
  );
}
