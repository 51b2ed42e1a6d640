import { TRPCError } from "@trpc/server";
import { forbidden } from "next/navigation";
import { ASSIGNABLE_ROLES } from "../../../../../server/identity/roles";
import { SSO_REFUSALS } from "../../../../../server/identity/sso/sign-in";
import { ActionForm } from "../../../_components/action-form";
import { ConfirmAction } from "../../../_components/confirm-action";
import { CopyButton } from "../../../_components/copy-button";
import { Time } from "../../../_components/time";
import { requireMember, settingsCaller } from "../../../_lib/session";
import {
  addDomainAction,
  connectOidcAction,
  connectSamlAction,
  disconnectAction,
  removeDomainAction,
  savePolicyAction,
  setBreakGlassAction,
  testConnectionAction,
  verifyDomainAction,
} from "./actions";
import { OidcForm } from "./oidc-form";
import { SamlMetadataField } from "./saml-metadata-field";

export const metadata = { title: "Single sign-on · Settings" };

const PATH = "/settings/security/sso";

const MODE_TEXT = {
  off: "Off: nobody signs in through the identity provider.",
  optional:
    "Optional: people of verified domains are sent to the identity provider; passwords and passkeys still work.",
  required:
    "Required: members sign in through the identity provider only (break-glass owners and the grace period aside).",
} as const;

function one(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** How long until `date` in days and hours, for the grace period's countdown. */
function countdown(date: Date): string {
  const hours = Math.max(0, Math.floor((date.getTime() - Date.now()) / 3_600_000));
  const days = Math.floor(hours / 24);
  const rest = hours % 24;
  if (days === 0) return rest <= 1 ? "less than 2 hours" : `${rest} hours`;
  return `${days} day${days === 1 ? "" : "s"}${rest > 0 ? ` ${rest} hour${rest === 1 ? "" : "s"}` : ""}`;
}

/** What "Test the connection" says a real sign-in would do: `let in as <role>`, or the refusal's words. */
function outcomeText(outcome: string): string {
  if (outcome.startsWith("let in as ")) return `A real sign-in would let this person in as ${outcome.slice(10)}.`;
  const message = (SSO_REFUSALS as Record<string, string>)[outcome];
  return `A real sign-in would be refused (${outcome})${message ? `: ${message}` : ""}.`;
}

/** A value as one line of the claims table (strings as they are, anything else as JSON). */
function claimText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A labelled value with a copy button, for the values the identity provider is configured with. */
function CopyValue({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        <code data-testid={testId}>{value}</code> <CopyButton value={value} label={`Copy ${label}`} />
      </dd>
    </>
  );
}

/**
 * Single sign-on of the organisation (docs/api-contract.md §11; docs/single-sign-on.md): the identity provider (OIDC
 * or SAML), the values to give it, the email domains with their DNS TXT records, the policy (mode, just-in-time
 * membership, default role, groups claim, ordered group → role map, grace period), break-glass owners and their
 * sign-ins, and "Test the connection" with what the provider sent. Owners and admins; others get the 403 page. Every
 * change needs a recent sign-in: a refused change links to the confirmation and back.
 */
export default async function SsoPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const me = await requireMember(PATH);
  const params = await searchParams;
  const caller = await settingsCaller();
  // The server decides (and records a refusal); a role without the setting gets the 403 page.
  const overview = await caller.sso.overview().catch((caught: unknown) => {
    if (caught instanceof TRPCError && caught.code === "FORBIDDEN") forbidden();
    throw caught;
  });
  const nonce = one(params.test);
  const test = nonce && /^[A-Za-z0-9_-]{1,64}$/.test(nonce) ? await caller.sso.testResult({ nonce }) : null;
  const { provider, urls, domains, policy, owners, breakGlassUses } = overview;
  const owner = me.role === "owner";
  const inGrace = policy.mode === "required" && policy.graceUntil !== null && policy.graceUntil.getTime() > Date.now();
  const verified = domains.filter((domain) => domain.verified).length;
  const rulesText = policy.groupRoles.map((rule) => `${rule.group} = ${rule.role}`).join("\n");
  return (
    <>
      <h1>Single sign-on</h1>
      <p>
        People of {me.org.name} sign in through your identity provider (OIDC or SAML 2.0) with their work email. Set it
        up in this order: connect the provider, verify your email domains, test the connection, then choose the policy.
        The step-by-step guides for Entra ID, Google Workspace and Okta are in the documentation
        (docs/single-sign-on.md).
      </p>
      {policy.enforcementSuspendedAt ? (
        <p role="alert" className="alert warning" data-testid="enforcement-suspended">
          The operator switched enforcement off on <Time value={policy.enforcementSuspendedAt} />: the policy still says
          required, but password and passkey sign-ins work again. Fix the cause, test the connection, then save the
          policy to turn enforcement back on.
        </p>
      ) : null}
      {inGrace && policy.graceUntil ? (
        <p className="alert warning" data-testid="grace-countdown">
          Grace period: password and passkey sign-ins still work for {countdown(policy.graceUntil)}, until{" "}
          <Time value={policy.graceUntil} />. After that, members sign in through the identity provider only.
        </p>
      ) : null}
      {me.recentlyAuthenticated ? null : (
        <p className="hint" data-testid="sso-step-up">
          Changing these settings needs a sign-in within the last 15 minutes:{" "}
          <a href={`/settings/confirm?next=${encodeURIComponent(PATH)}`}>confirm it's you</a> first.
        </p>
      )}
      <p>
        <span className="badge" data-testid="sso-mode">
          {policy.mode}
        </span>{" "}
        {MODE_TEXT[policy.mode]}
      </p>

      {nonce ? (
        <section aria-labelledby="test-result-heading" data-testid="test-result">
          <h2 id="test-result-heading">Connection test</h2>
          {test ? (
            <>
              <p className="alert success">
                The identity provider answered at <Time value={test.at} />. Nothing was changed and no one was signed
                in.
              </p>
              <dl className="meta">
                <dt>Email</dt>
                <dd data-testid="test-email">{test.email}</dd>
                <dt>Name</dt>
                <dd data-testid="test-name">{test.name || <span className="muted">none</span>}</dd>
                <dt>Groups (claim “{policy.groupsClaim}”)</dt>
                <dd data-testid="test-groups">
                  {test.groups.length > 0 ? (
                    test.groups.map((group) => (
                      <span key={group}>
                        <code>{group}</code>{" "}
                      </span>
                    ))
                  ) : (
                    <span className="muted">none arrived</span>
                  )}
                </dd>
                <dt>Outcome</dt>
                <dd data-testid="test-outcome">{outcomeText(test.outcome)}</dd>
              </dl>
              <h3 id="claims-heading">Every {test.protocol === "oidc" ? "claim" : "attribute"} received</h3>
              <div className="table-wrap">
                <table data-testid="test-claims" aria-labelledby="claims-heading">
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Value</th>
                    </tr>
                  </thead>
                  <tbody>
                    {Object.entries(test.claims).map(([name, value]) => (
                      <tr key={name}>
                        <th scope="row">
                          <code>{name}</code>
                        </th>
                        <td className="truncate" title={claimText(value)}>
                          {claimText(value)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          ) : (
            <p className="alert warning" data-testid="test-missing">
              No answer for this test: the identity provider did not send the browser back, or the test is older than 10
              minutes, or it was someone else's. Test again.
            </p>
          )}
        </section>
      ) : null}

      <section aria-labelledby="provider-heading">
        <h2 id="provider-heading">Identity provider</h2>
        {provider ? (
          <div className="card" data-testid="sso-provider">
            <p className="actions">
              <span className="badge ok">{provider.protocol === "oidc" ? "OIDC" : "SAML 2.0"}</span> connected
            </p>
            <dl className="meta">
              <dt>{provider.protocol === "oidc" ? "Issuer" : "IdP entity ID"}</dt>
              <dd>
                <code>{provider.issuer}</code>
              </dd>
              {provider.clientId ? (
                <>
                  <dt>Client ID</dt>
                  <dd>
                    <code>{provider.clientId}</code>
                  </dd>
                </>
              ) : null}
              {provider.idpSsoUrl ? (
                <>
                  <dt>IdP sign-in URL</dt>
                  <dd>
                    <code>{provider.idpSsoUrl}</code>
                  </dd>
                </>
              ) : null}
              <dt>Connected</dt>
              <dd>
                <Time value={provider.configuredAt} />
              </dd>
            </dl>
            <ActionForm action={testConnectionAction} submitLabel="Test the connection" pendingLabel="Starting…">
              <p className="hint">
                Signs you in at the identity provider and shows what it sends (email, name, groups, every claim) and
                what a real sign-in would do, without changing anything. Needs a verified domain. To test as someone
                else, use a private window.
              </p>
            </ActionForm>
            <ConfirmAction
              action={disconnectAction}
              summary="Disconnect…"
              explanation="Nobody can sign in through this provider any more; the URLs below stay the same for the next one. Not possible while single sign-on is required."
              submitLabel="Disconnect the identity provider"
              danger
            />
          </div>
        ) : (
          <p className="muted" data-testid="sso-no-provider">
            No identity provider is connected.
          </p>
        )}
        <details open={provider === null || undefined}>
          <summary>{provider ? "Replace with an OIDC provider…" : "Connect an OIDC provider"}</summary>
          <OidcForm
            action={connectOidcAction}
            current={
              provider?.protocol === "oidc" ? { issuer: provider.issuer, clientId: provider.clientId ?? "" } : null
            }
          />
        </details>
        <details>
          <summary>{provider ? "Replace with a SAML provider…" : "Connect a SAML 2.0 provider"}</summary>
          <ActionForm
            action={connectSamlAction}
            submitLabel="Save SAML provider"
            pendingLabel="Checking…"
            className="stack"
          >
            <SamlMetadataField />
          </ActionForm>
        </details>
      </section>

      <section aria-labelledby="idp-needs-heading">
        <h2 id="idp-needs-heading">What your identity provider needs</h2>
        <dl className="meta" data-testid="sso-urls">
          <CopyValue label="OIDC redirect URI" value={urls.redirectUri} testId="redirect-uri" />
          <CopyValue label="SAML ACS URL (Reply URL)" value={urls.acsUrl} testId="acs-url" />
          <CopyValue label="SAML SP entity ID" value={urls.spEntityId} testId="sp-entity-id" />
          <CopyValue label="SAML SP metadata URL" value={urls.spMetadataUrl} testId="sp-metadata-url" />
        </dl>
        <p className="hint">
          Register the redirect URI exactly (same scheme and host, no trailing slash). SAML: NameID format email
          address, assertions signed; start sign-ins from <code>/signin</code>, not from the provider's portal.
        </p>
      </section>

      <section aria-labelledby="domains-heading">
        <h2 id="domains-heading">
          Email domains ({verified} of {domains.length} verified)
        </h2>
        <p>
          Only people whose email is in a verified domain are sent to the identity provider and let in by it. Publish
          each domain's TXT record at your DNS host, then press Verify. Keep the record: requiring SSO checks every
          domain again.
        </p>
        {domains.length > 0 ? (
          <ul className="key-list" data-testid="sso-domains">
            {domains.map((domain) => (
              <li
                key={domain.domain}
                className="card"
                data-testid="sso-domain"
                aria-labelledby={`domain-${domain.domain}`}
              >
                <h3 id={`domain-${domain.domain}`}>{domain.domain}</h3>
                <p className="actions">
                  {domain.verified ? (
                    <span className="badge ok" data-testid="domain-status">
                      verified
                    </span>
                  ) : (
                    <span className="badge warn" data-testid="domain-status">
                      not verified
                    </span>
                  )}
                </p>
                <dl className="meta">
                  <dt>Record type</dt>
                  <dd>TXT</dd>
                  <CopyValue label={`TXT name for ${domain.domain}`} value={domain.txtName} testId="txt-name" />
                  <CopyValue label={`TXT value for ${domain.domain}`} value={domain.txtValue} testId="txt-value" />
                  {domain.verifiedAt ? (
                    <>
                      <dt>Verified</dt>
                      <dd>
                        <Time value={domain.verifiedAt} />
                      </dd>
                    </>
                  ) : null}
                  <dt>Last checked</dt>
                  <dd>
                    <Time value={domain.lastCheckedAt} />
                  </dd>
                  {domain.lastError ? (
                    <>
                      <dt>Last check found</dt>
                      <dd data-testid="domain-error">{domain.lastError}</dd>
                    </>
                  ) : null}
                </dl>
                <ActionForm
                  action={verifyDomainAction}
                  submitLabel={`Verify ${domain.domain}`}
                  pendingLabel="Looking up…"
                >
                  <input type="hidden" name="domain" value={domain.domain} />
                </ActionForm>
                <ConfirmAction
                  action={removeDomainAction}
                  summary="Remove…"
                  explanation={`People of ${domain.domain} are no longer sent to the identity provider, nor let in by it.`}
                  submitLabel={`Remove ${domain.domain}`}
                  danger
                >
                  <input type="hidden" name="domain" value={domain.domain} />
                </ConfirmAction>
              </li>
            ))}
          </ul>
        ) : null}
        <ActionForm action={addDomainAction} submitLabel="Add domain" className="stack">
          <div className="field">
            <label htmlFor="sso-domain">Email domain</label>
            <input
              id="sso-domain"
              name="domain"
              type="text"
              required
              maxLength={253}
              autoComplete="off"
              placeholder="example.com"
            />
          </div>
        </ActionForm>
      </section>

      <section aria-labelledby="policy-heading">
        <h2 id="policy-heading">Policy</h2>
        <ActionForm action={savePolicyAction} submitLabel="Save policy" pendingLabel="Saving…" className="stack">
          <fieldset>
            <legend>Mode</legend>
            {(["off", "optional", "required"] as const).map((mode) => (
              <label className="choice" key={mode}>
                <input type="radio" name="mode" value={mode} defaultChecked={policy.mode === mode} />
                <span className="choice-text">{MODE_TEXT[mode]}</span>
              </label>
            ))}
          </fieldset>
          <label className="choice">
            <input type="checkbox" name="jit" defaultChecked={policy.jit} />
            <span className="choice-text">
              <span>Just-in-time membership</span>
              <span className="hint">
                A person of a verified domain who is not a member joins at their first SSO sign-in (people removed by
                hand stay out until invited again).
              </span>
            </span>
          </label>
          <div className="field">
            <label htmlFor="sso-default-role">Default role</label>
            <select id="sso-default-role" name="defaultRole" defaultValue={policy.defaultRole}>
              {ASSIGNABLE_ROLES.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
            <p className="hint">For just-in-time members, and anyone whose groups match no rule below.</p>
          </div>
          <div className="field">
            <label htmlFor="sso-groups-claim">Groups claim or attribute</label>
            <input
              id="sso-groups-claim"
              name="groupsClaim"
              type="text"
              required
              maxLength={256}
              autoComplete="off"
              defaultValue={policy.groupsClaim}
            />
          </div>
          <div className="field">
            <label htmlFor="sso-group-roles">Group → role map, one rule a line: group = role</label>
            <textarea
              id="sso-group-roles"
              name="groupRoles"
              rows={5}
              spellCheck={false}
              defaultValue={rulesText}
              placeholder={"crm-admins = admin\ncrm-engineers = developer\ncrm-readonly = viewer"}
              aria-describedby="sso-group-roles-hint"
            />
            <p id="sso-group-roles-hint" className="hint">
              The first line whose group the person is in gives their role (admin, developer or viewer; never owner), at
              every SSO sign-in; reorder by moving lines, remove a rule by deleting its line. Group values are compared
              exactly as the provider sends them: copy them from a connection test. With at least one rule, roles are
              managed by the provider's groups; owners keep theirs.
            </p>
          </div>
          <div className="field">
            <label htmlFor="sso-grace">Grace period ends (UTC), when required</label>
            <input
              id="sso-grace"
              name="graceUntil"
              type="datetime-local"
              defaultValue={policy.graceUntil ? policy.graceUntil.toISOString().slice(0, 16) : ""}
              aria-describedby="sso-grace-hint"
            />
            <p id="sso-grace-hint" className="hint">
              Optional, within the next 90 days: until then password and passkey sign-ins still work while required.
              Leave empty for none.
            </p>
          </div>
          <p className="hint">
            Switching to required checks every listed domain's record again and needs a connected provider. Name
            break-glass owners first.
          </p>
        </ActionForm>
      </section>

      <section aria-labelledby="break-glass-heading">
        <h2 id="break-glass-heading">Break-glass owners</h2>
        <p>
          While single sign-on is required, these owners may still sign in with their password and second factor, so an
          identity provider outage does not lock {me.org.name} out. Each such sign-in is recorded and shown to the other
          owners below. Name one, better two.
        </p>
        {owner ? (
          <ActionForm action={setBreakGlassAction} submitLabel="Save break-glass owners" className="stack">
            <fieldset data-testid="break-glass-owners">
              <legend>Owners</legend>
              {owners.map((candidate) => (
                <div key={candidate.memberId}>
                  <input type="hidden" name="owner" value={candidate.memberId} />
                  {candidate.breakGlass ? <input type="hidden" name="current" value={candidate.memberId} /> : null}
                  <label className="choice">
                    <input
                      type="checkbox"
                      name="breakGlass"
                      value={candidate.memberId}
                      defaultChecked={candidate.breakGlass}
                      disabled={!candidate.hasSecondFactor && !candidate.breakGlass}
                    />
                    <span className="choice-text">
                      <span>{candidate.email}</span>
                      {candidate.hasSecondFactor ? null : (
                        <span className="hint">
                          No authenticator app or passkey: a break-glass owner must have a second factor
                          (/settings/security).
                        </span>
                      )}
                    </span>
                  </label>
                </div>
              ))}
            </fieldset>
          </ActionForm>
        ) : (
          <ul data-testid="break-glass-owners">
            {owners.map((candidate) => (
              <li key={candidate.memberId}>
                {candidate.email}: {candidate.breakGlass ? "break-glass owner" : "not break-glass"}
              </li>
            ))}
            <li className="muted">Only owners name break-glass owners.</li>
          </ul>
        )}
        <h3 id="break-glass-uses-heading">Recent break-glass sign-ins ({breakGlassUses.length})</h3>
        {breakGlassUses.length === 0 ? (
          <p className="muted">None.</p>
        ) : (
          <div className="table-wrap">
            <table data-testid="break-glass-uses" aria-labelledby="break-glass-uses-heading">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Owner</th>
                  <th scope="col">Second factor</th>
                </tr>
              </thead>
              <tbody>
                {breakGlassUses.map((use) => (
                  <tr key={`${use.at.toISOString()}-${use.email}`}>
                    <td className="nowrap">
                      <Time value={use.at} />
                    </td>
                    <td>{use.email}</td>
                    <td>{use.method ?? "—"}</td>
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
