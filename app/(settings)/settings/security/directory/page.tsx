import { DIRECTORY_ACTIONS } from "../../../../../server/identity/directory/events";
import { ActionForm } from "../../../_components/action-form";
import { ConfirmAction } from "../../../_components/confirm-action";
import { CopyButton } from "../../../_components/copy-button";
import { Time } from "../../../_components/time";
import { requireMember, settingsCaller } from "../../../_lib/session";
import { createTokenAction, revokeTokenAction, rotateTokenAction } from "./actions";

export const metadata = { title: "Directory · Settings" };

const PAGE = "/settings/security/directory";

function details(value: unknown): string {
  if (!value || typeof value !== "object") return "";
  return Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== null && item !== undefined && item !== "")
    .map(([key, item]) => `${key}: ${String(item)}`)
    .join(" · ");
}

/**
 * Provisioning (SCIM 2.0, docs/api-contract.md §11.5): the SCIM base URL and the organisation's bearer token (shown
 * once, rotated, revoked), what a deprovisioning does and which service keys it keeps, the group
 * map that gives roles, and the directory events (last request, what changed, errors). Owners and admins only; other
 * roles see a note, and the server refuses them anyway. Creating and rotating a token ask for a recent sign-in.
 */
export default async function DirectoryPage() {
  const me = await requireMember(PAGE);
  if (!me.permissions["audit:read"]) {
    return (
      <>
        <h1>Directory provisioning</h1>
        <p className="muted" data-testid="read-only-note">
          Your role ({me.role}) cannot see provisioning: owners and admins of {me.org.name} connect the directory.
        </p>
      </>
    );
  }
  const caller = await settingsCaller();
  const [overview, events] = await Promise.all([caller.directory.overview(), caller.directory.events({ limit: 50 })]);
  const manage = me.permissions["organization:update"];
  const current = overview.tokens.find((token) => token.status === "active");
  const lastError = events.find((event) => event.outcome === "error");
  const confirmFirst = me.recentlyAuthenticated ? null : (
    <p className="hint" data-testid="directory-step-up">
      Creating or rotating a token needs a sign-in within the last 15 minutes:{" "}
      <a href={`/settings/confirm?next=${encodeURIComponent(PAGE)}`}>confirm it's you</a> first.
    </p>
  );
  return (
    <>
      <h1>Directory provisioning</h1>
      <p>
        Your identity provider (Microsoft Entra ID, Okta, …) keeps the team in step with the directory over SCIM 2.0:
        people it assigns become members with the role their groups give; people it deactivates or deletes leave at
        once. The directory authenticates with a bearer token, shown once.
      </p>

      <section aria-labelledby="connection-heading">
        <h2 id="connection-heading">Connection</h2>
        <dl className="meta">
          <dt>SCIM base URL</dt>
          <dd>
            <code data-testid="scim-base-url">{overview.baseUrl}</code> <CopyButton value={overview.baseUrl} />
          </dd>
          <dt>Last request</dt>
          <dd data-testid="last-sync">
            {overview.lastRequestAt ? <Time value={overview.lastRequestAt} /> : <span className="muted">never</span>}
          </dd>
          <dt>Last error</dt>
          <dd>
            {lastError ? (
              <>
                <Time value={lastError.createdAt} />: {details(lastError.details) || lastError.action}
              </>
            ) : (
              <span className="muted">none</span>
            )}
          </dd>
        </dl>
        {manage ? confirmFirst : null}
        {manage && !current ? (
          <ActionForm action={createTokenAction} submitLabel="Create SCIM token" pendingLabel="Creating…" />
        ) : null}
        {overview.tokens.length === 0 ? (
          <p>No token yet: provisioning is off.</p>
        ) : (
          <ul className="key-list">
            {overview.tokens.map((token) => (
              <li key={token.id} className="card" data-testid="scim-token">
                <h3>
                  <code>{token.id}</code>
                </h3>
                <p className="actions">
                  <span className={`badge ${token.status === "active" ? "ok" : "error"}`}>{token.status}</span>
                </p>
                <dl className="meta">
                  <dt>Created</dt>
                  <dd>
                    <Time value={token.createdAt} />
                    {token.createdBy ? ` by ${token.createdBy}` : null}
                  </dd>
                  <dt>{token.status === "expired" ? "Expired" : "Expires"}</dt>
                  <dd>
                    <Time value={token.expiresAt} />
                  </dd>
                  <dt>Last used</dt>
                  <dd>{token.lastUsedAt ? <Time value={token.lastUsedAt} /> : <span className="muted">never</span>}</dd>
                  {token.revokedAt ? (
                    <>
                      <dt>Revoked</dt>
                      <dd>
                        <Time value={token.revokedAt} />
                      </dd>
                    </>
                  ) : null}
                </dl>
                <ConfirmAction
                  action={rotateTokenAction}
                  summary="Rotate…"
                  explanation="Makes a new token and shows it once. This one stops working at once: paste the new one into the directory straight away."
                  submitLabel="Rotate the SCIM token"
                  pendingLabel="Rotating…"
                  showButton={manage && token.status === "active"}
                />
                <ConfirmAction
                  action={revokeTokenAction}
                  summary="Revoke…"
                  explanation="The directory's requests with this token get 401 from now on; provisioning stops until it has a working token. Nobody is deprovisioned."
                  submitLabel="Revoke this token"
                  pendingLabel="Revoking…"
                  danger
                  showButton={manage && token.status === "active"}
                >
                  <input type="hidden" name="id" value={token.id} />
                </ConfirmAction>
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="roles-heading">
        <h2 id="roles-heading">Groups and roles</h2>
        <p>
          The directory's groups give roles through the same ordered map as single sign-on: the first rule whose group
          (the group's name or its directory id, exactly as the directory sends them) the person is in gives the role;
          in none, they get <strong>{overview.roles.defaultRole}</strong>. Owners are never made or changed by the
          directory.
          {overview.roles.rules.length === 0
            ? " There is no map yet, so members keep the roles they have and people the directory adds get the default role."
            : null}
        </p>
        {overview.roles.rules.length === 0 ? null : (
          <ol data-testid="group-roles">
            {overview.roles.rules.map((rule) => (
              <li key={`${rule.group}:${rule.role}`}>
                <code>{rule.group}</code> → {rule.role}
              </li>
            ))}
          </ol>
        )}
      </section>

      <section aria-labelledby="deprovisioning-heading">
        <h2 id="deprovisioning-heading">When the directory removes someone</h2>
        <p>
          Deactivating a person (<code>active: false</code>) or deleting them ends their membership in one step, the
          same as removing them on the Team page: their sessions end, the API keys they created are revoked, their
          pending invitations and connected apps go, and the audit trail records it. A later single sign-on does not add
          them back. Reactivating them restores the membership with the role their groups give, not their keys or
          sessions. The organisation's last owner is never deprovisioned.
        </p>
        <h3>Service keys that stay</h3>
        {overview.serviceKeys.length === 0 ? (
          <p className="muted" data-testid="service-keys-none">
            No organisation service keys: every key a deprovisioned person created is revoked.
          </p>
        ) : (
          <ul data-testid="service-keys">
            {overview.serviceKeys.map((key) => (
              <li key={key.id}>
                {key.name} <code>{key.prefix}…</code> ({key.isTest ? "test" : "live"}
                {key.createdBy ? `, created by ${key.createdBy.email}` : ""})
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="events-heading">
        <h2 id="events-heading">Directory events</h2>
        {events.length === 0 ? (
          <p data-testid="directory-events-empty">Nothing yet.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="directory-events">
              <caption className="visually-hidden">Directory events, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Event</th>
                  <th scope="col">Who or what</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {events.map((event) => (
                  <tr key={event.id} data-action={event.action}>
                    <td className="nowrap">
                      <Time value={event.createdAt} />
                    </td>
                    <td>
                      {DIRECTORY_ACTIONS[event.action as keyof typeof DIRECTORY_ACTIONS] ?? event.action}
                      {details(event.details) ? <div className="muted">{details(event.details)}</div> : null}
                    </td>
                    <td>{event.target ?? <span className="muted">—</span>}</td>
                    <td>
                      <span className={`badge ${event.outcome === "error" ? "error" : "ok"}`}>{event.outcome}</span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
