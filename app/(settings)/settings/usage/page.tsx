import { settingsErrorMessage } from "../../../../server/routers/settings/trpc";
import { PLAN_LIMITS } from "../../../../server/services/organisations";
import { Time } from "../../_components/time";
import { formatDuration } from "../../_lib/format";
import { requireMember, settingsCaller } from "../../_lib/session";

export const metadata = { title: "Usage · Settings" };

const STATUS_OPTIONS = [
  ["", "Any status"],
  ["2xx", "2xx success"],
  ["4xx", "4xx client errors"],
  ["5xx", "5xx server errors"],
  ...["200", "201", "400", "401", "403", "404", "405", "409", "413", "422", "429", "500", "503"].map((s) => [s, s]),
] as const;

function one(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? "";
}

function query(params: Record<string, string>): string {
  const search = new URLSearchParams(Object.entries(params).filter(([, value]) => value !== ""));
  const text = search.toString();
  return text ? `?${text}` : "";
}

/**
 * The organisation's usage: its rate-limit plan and limits (docs/api-contract.md §8) and its audit log
 * (docs/api-contract.md §1) with filters by key, status and path, keyset-paginated. Filters are a plain GET form, so it
 * works without JavaScript.
 */
export default async function UsagePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  await requireMember("/settings/usage");
  const params = await searchParams;
  const filters = { key: one(params.key), status: one(params.status), path: one(params.path) };
  const cursor = one(params.cursor);
  const caller = await settingsCaller();
  const [limits, keys, lastDay] = await Promise.all([
    caller.usage.limits(),
    caller.apiKeys.list(),
    caller.usage.lastDay(),
  ]);
  const keyNames = new Map(keys.map((key) => [key.id, key]));
  let log: Awaited<ReturnType<typeof caller.usage.auditLog>> = { data: [], hasMore: false, nextCursor: null };
  let error: string | null = null;
  try {
    log = await caller.usage.auditLog({
      apiKeyId: filters.key || undefined,
      status: filters.status || undefined,
      path: filters.path || undefined,
      cursor: cursor || undefined,
      limit: 50,
    });
  } catch (caught) {
    error = settingsErrorMessage(caught);
  }
  const filtered = Boolean(filters.key || filters.status || filters.path);

  return (
    <>
      <h1>Usage</h1>

      <section aria-labelledby="limits-heading">
        <h2 id="limits-heading">Rate limits</h2>
        <p>
          Plan <strong data-testid="plan">{limits.plan.toLowerCase()}</strong>: at most <strong>{limits.perKey}</strong>{" "}
          requests per minute per key
          {limits.overridden.perKey ? ` (operator override; plan default ${limits.planDefaults.perKey})` : ""} and{" "}
          <strong>{limits.perOrg}</strong> per minute for the whole organisation
          {limits.overridden.perOrg ? ` (operator override; plan default ${limits.planDefaults.perOrg})` : ""}. Both
          sliding windows apply at once; a request over either gets 429 <code>rate_limited</code> with{" "}
          <code>Retry-After</code>. Every response carries <code>X-RateLimit-Limit</code>,{" "}
          <code>X-RateLimit-Remaining</code> and <code>X-RateLimit-Reset</code>.
        </p>
        <p>
          Last 24 hours: <strong>{lastDay.total}</strong> calls, <strong>{lastDay.errors}</strong> with status 400 or
          above.
        </p>
        <details>
          <summary>All plans</summary>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Plans and their default limits, requests per minute</caption>
              <thead>
                <tr>
                  <th scope="col">Plan</th>
                  <th scope="col">Per key</th>
                  <th scope="col">Organisation-wide</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(PLAN_LIMITS).map(([plan, value]) => (
                  <tr key={plan}>
                    <th scope="row">{plan.toLowerCase()}</th>
                    <td className="num">{value.perKey}</td>
                    <td className="num">{value.perOrg}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      </section>

      <section aria-labelledby="log-heading">
        <h2 id="log-heading">Audit log</h2>
        <p className="hint">
          Every call to <code>/api/v1</code> made with your keys, refused ones included, newest first. Calls appear a
          moment (under a second) after they are answered.
        </p>
        <form method="get" className="filters" aria-label="Filter the audit log">
          <div className="field">
            <label htmlFor="filter-key">Key</label>
            <select id="filter-key" name="key" defaultValue={filters.key}>
              <option value="">Any key</option>
              {keys.map((key) => (
                <option key={key.id} value={key.id}>
                  {key.name} ({key.prefix}…)
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="filter-status">Status</label>
            <select id="filter-status" name="status" defaultValue={filters.status}>
              {STATUS_OPTIONS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="filter-path">Path contains</label>
            <input id="filter-path" name="path" type="search" defaultValue={filters.path} placeholder="/accounts" />
          </div>
          <div className="actions">
            <button type="submit">Apply filters</button>
            {filtered ? (
              <a className="button secondary" href="/settings/usage">
                Clear
              </a>
            ) : null}
          </div>
        </form>

        {error ? (
          <p role="alert" className="alert error">
            {error}
          </p>
        ) : log.data.length === 0 ? (
          <p data-testid="audit-empty">
            {filtered || cursor ? "No calls match these filters." : "No API calls yet. Create a key and call the API."}
          </p>
        ) : (
          <div className="table-wrap">
            <table data-testid="audit-log">
              <caption className="visually-hidden">API calls, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Request</th>
                  <th scope="col">Status</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Key</th>
                  <th scope="col">Request id</th>
                </tr>
              </thead>
              <tbody>
                {log.data.map((row) => {
                  const key = row.apiKeyId ? keyNames.get(row.apiKeyId) : undefined;
                  return (
                    <tr key={row.id}>
                      <td className="nowrap">
                        <Time value={row.createdAt} />
                      </td>
                      <td className="breakable">
                        <code>
                          {row.method} {row.path}
                          {row.query ? `?${row.query}` : ""}
                        </code>
                      </td>
                      <td>
                        <span className={`badge ${row.status >= 400 ? "error" : "ok"}`}>{row.status}</span>
                        {row.errorCode ? <code> {row.errorCode}</code> : null}
                      </td>
                      <td className="num nowrap">{formatDuration(row.durationMs)}</td>
                      <td>
                        {key ? `${key.name} (${key.prefix}…)` : <span className="muted">—</span>}
                        {row.isTest ? <span className="badge test"> test</span> : null}
                      </td>
                      <td className="breakable">
                        <code>{row.requestId}</code>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <nav className="pager" aria-label="Audit log pages">
          {cursor ? <a href={`/settings/usage${query(filters)}`}>Newest calls</a> : null}
          {log.hasMore && log.nextCursor ? (
            <a href={`/settings/usage${query({ ...filters, cursor: log.nextCursor })}`}>Older calls →</a>
          ) : null}
        </nav>
      </section>
    </>
  );
}
