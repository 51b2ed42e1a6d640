import { TRPCError } from "@trpc/server";
import { forbidden } from "next/navigation";
import { SETTINGS_AUDIT_ACTIONS } from "../../../../server/identity/audit-trail/service";
import { settingsErrorMessage } from "../../../../server/settings/trpc";
import { Address } from "../../_components/address";
import { Time } from "../../_components/time";
import { requireMember, settingsCaller } from "../../_lib/session";

export const metadata = { title: "Audit trail · Settings" };

function one(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? "";
}

function query(params: Record<string, string>): string {
  const search = new URLSearchParams(Object.entries(params).filter(([, value]) => value !== ""));
  const text = search.toString();
  return text ? `?${text}` : "";
}

function details(value: unknown): string {
  if (!value || typeof value !== "object") return "";
  return Object.entries(value as Record<string, unknown>)
    .filter(([key]) => !key.endsWith("Id"))
    .map(([key, entry]) => `${key}: ${String(entry)}`)
    .join(", ");
}

/**
 * Who did what in the organisation's settings: sign-ins (and failed ones), invitations, members and roles, keys,
 * endpoints, secrets and refused actions, each with time, actor, target and address; filters by actor and action
 * (a plain GET form, so it works without JavaScript), keyset-paginated. Owners and admins see it.
 */
export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const me = await requireMember("/settings/audit");
  const params = await searchParams;
  const filters = { actor: one(params.actor), action: one(params.action) };
  const cursor = one(params.cursor);
  const caller = await settingsCaller();
  // The server decides (and records a refusal); a role without the trail gets the 403 page.
  const actors = await caller.audit.actors().catch((caught: unknown) => {
    if (caught instanceof TRPCError && caught.code === "FORBIDDEN") forbidden();
    throw caught;
  });
  let page: Awaited<ReturnType<typeof caller.audit.list>> = { data: [], hasMore: false, nextCursor: null };
  let error: string | null = null;
  try {
    page = await caller.audit.list({
      actor: filters.actor || undefined,
      action: filters.action || undefined,
      cursor: cursor || undefined,
      limit: 50,
    });
  } catch (caught) {
    error = settingsErrorMessage(caught);
  }
  return (
    <>
      <h1>Audit trail</h1>
      <p>
        Every sign-in, team change, key, endpoint and secret change in {me.org.name}'s settings, and every action a role
        was refused, newest first. Entries are kept for as long as the organisation exists, like the API's audit log on
        the <a href="/settings/usage">usage page</a>.
      </p>
      <form method="get" className="filters" aria-label="Filter the audit trail">
        <div className="field">
          <label htmlFor="audit-actor">Actor</label>
          <select id="audit-actor" name="actor" defaultValue={filters.actor}>
            <option value="">Anyone</option>
            {actors.map((actor) => (
              <option key={actor.value} value={actor.value}>
                {actor.email}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="audit-action">Action</label>
          <select id="audit-action" name="action" defaultValue={filters.action}>
            <option value="">Any action</option>
            {Object.entries(SETTINGS_AUDIT_ACTIONS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit">Filter</button>{" "}
          {filters.actor || filters.action ? <a href="/settings/audit">Clear filters</a> : null}
        </div>
      </form>
      {error ? (
        <p role="alert" className="alert error">
          {error}
        </p>
      ) : null}
      {page.data.length === 0 ? (
        <p data-testid="audit-trail-empty">
          No entries{filters.actor || filters.action ? " match these filters" : " yet"}.
        </p>
      ) : (
        <div className="table-wrap">
          <table data-testid="audit-trail">
            <caption className="visually-hidden">Settings audit trail, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Address</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((entry) => (
                <tr key={entry.id} data-action={entry.action}>
                  <td className="nowrap">
                    <Time value={entry.createdAt} />
                  </td>
                  <td>{entry.actorEmail}</td>
                  <td>
                    {SETTINGS_AUDIT_ACTIONS[entry.action as keyof typeof SETTINGS_AUDIT_ACTIONS] ?? entry.action}
                    {details(entry.details) ? <div className="muted">{details(entry.details)}</div> : null}
                  </td>
                  <td>{entry.target ?? <span className="muted">—</span>}</td>
                  <td>
                    <Address value={entry.ip} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className="pager" aria-label="Audit trail pages">
        {cursor ? <a href={`/settings/audit${query(filters)}`}>Newest entries</a> : null}
        {page.hasMore && page.nextCursor ? (
          <a href={`/settings/audit${query({ ...filters, cursor: page.nextCursor })}`}>Older entries →</a>
        ) : null}
      </nav>
    </>
  );
}
