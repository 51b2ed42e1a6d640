import { PLAN_LIMITS } from "../../../../server/platform/organisations";
import { settingsErrorMessage } from "../../../../server/settings/trpc";
import { type ChartSeries, StackedBarChart } from "../../_components/chart";
import { Time } from "../../_components/time";
import { formatDuration } from "../../_lib/format";
import { requireMember, settingsCaller } from "../../_lib/session";
import { bucketLabel, type UsageParams, usageHref, usageParams } from "./params";

export const metadata = { title: "Usage · Settings" };

const STATUS_OPTIONS = [
  ["", "Any status"],
  ["2xx", "2xx success"],
  ["3xx", "3xx not modified"],
  ["4xx", "4xx client errors"],
  ["5xx", "5xx server errors"],
  ...["200", "201", "304", "400", "401", "403", "404", "405", "409", "413", "422", "429", "500", "503"].map(
    (s) => [s, s] as const,
  ),
] as const;

// `MCP` is a tool call of the MCP server, logged with the tool as its path (docs/api-contract.md §10.5).
const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "MCP"] as const;

const RANGES = [
  ["24h", "Last 24 hours"],
  ["7d", "Last 7 days"],
  ["30d", "Last 30 days"],
  ["custom", "Custom (UTC)"],
] as const;

const SERIES: ChartSeries[] = [
  { key: "2xx", label: "2xx", className: "chart-2xx" },
  { key: "3xx", label: "3xx", className: "chart-3xx" },
  { key: "4xx", label: "4xx", className: "chart-4xx" },
  { key: "5xx", label: "5xx", className: "chart-5xx" },
];

type Caller = Awaited<ReturnType<typeof settingsCaller>>;
type Series = Awaited<ReturnType<Caller["usage"]["series"]>>;

/**
 * The organisation's usage (docs/architecture.md, "Usage: the roll-up, the chart and the export"): for a range (last
 * 24 h, 7 d, 30 d or custom) and filters (key, status, method, path), a chart of requests per bucket by status class
 * with p95 latency, totals, top errors, then the request log of the same range and filters, 50 a page with keyset
 * cursors, and its CSV download. Every control is a link or a GET form, so it works without JavaScript. Rate-limit
 * plan and limits (docs/api-contract.md §8) close the page.
 */
export default async function UsagePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  await requireMember("/settings/usage");
  const params = usageParams(await searchParams);
  const caller = await settingsCaller();
  const [limits, keys] = await Promise.all([caller.usage.limits(), caller.apiKeys.list()]);
  const keyNames = new Map(keys.map((key) => [key.id, key]));
  const filters = {
    apiKeyId: params.key || undefined,
    status: params.status || undefined,
    method: (params.method || undefined) as (typeof METHODS)[number] | undefined,
    path: params.path || undefined,
  };
  let series: Series | null = null;
  let log: Awaited<ReturnType<Caller["usage"]["auditLog"]>> = { data: [], hasMore: false, nextCursor: null };
  let error: string | null = null;
  try {
    series = await caller.usage.series({ from: params.from, to: params.to, ...filters });
    log = await caller.usage.auditLog({
      from: series.from,
      to: series.to,
      ...filters,
      cursor: params.cursor || undefined,
      limit: 50,
    });
  } catch (caught) {
    error = settingsErrorMessage(caught);
  }
  const filtered = Boolean(params.key || params.status || params.method || params.path);
  const exportHref = series
    ? usageHref({ ...params, from: series.from, to: series.to, cursor: "" }, "/settings/usage/export")
    : "";

  return (
    <>
      <h1>Usage</h1>
      <p className="hint">
        Every call to <code>/api/v1</code> made with your keys, refused ones included. Calls appear a moment (under a
        second) after they are answered. Times are UTC.
      </p>

      <form method="get" className="filters usage-filters" aria-label="Range and filters">
        <SelectField id="filter-range" label="Range" name="range" value={params.range} options={RANGES} />
        <div className="field">
          <label htmlFor="filter-from">From (UTC, custom)</label>
          <input id="filter-from" name="from" type="datetime-local" defaultValue={params.customFrom} />
        </div>
        <div className="field">
          <label htmlFor="filter-to">To (UTC, custom)</label>
          <input id="filter-to" name="to" type="datetime-local" defaultValue={params.customTo} />
        </div>
        <SelectField
          id="filter-key"
          label="Key"
          name="key"
          value={params.key}
          options={[["", "Any key"], ...keys.map((key) => [key.id, `${key.name} (${key.prefix}…)`] as const)]}
        />
        <SelectField id="filter-status" label="Status" name="status" value={params.status} options={STATUS_OPTIONS} />
        <SelectField
          id="filter-method"
          label="Method"
          name="method"
          value={params.method}
          options={[["", "Any method"], ...METHODS.map((method) => [method, method] as const)]}
        />
        <div className="field">
          <label htmlFor="filter-path">Path contains</label>
          <input id="filter-path" name="path" type="search" defaultValue={params.path} placeholder="/accounts" />
        </div>
        <div className="actions">
          <button type="submit">Apply filters</button>
          {filtered || params.range !== "24h" ? (
            <a className="button secondary" href="/settings/usage">
              Reset
            </a>
          ) : null}
        </div>
      </form>

      {error ? (
        <p role="alert" className="alert error" data-testid="usage-error">
          {error}
        </p>
      ) : null}

      {series ? <UsageSummary series={series} params={params} /> : null}

      {series ? (
        <section aria-labelledby="log-heading">
          <div className="section-head">
            <h2 id="log-heading">Requests</h2>
            <a className="button secondary" href={exportHref} download data-testid="usage-export">
              Download CSV
            </a>
          </div>
          {log.data.length === 0 ? (
            <p data-testid="audit-empty">
              {filtered || params.cursor ? "No calls match these filters." : "No API calls in this range."}
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
                  </tr>
                </thead>
                <tbody>
                  {log.data.map((row) => {
                    const key = row.apiKeyId ? keyNames.get(row.apiKeyId) : undefined;
                    const request = `${row.method} ${row.path}${row.query ? `?${row.query}` : ""}`;
                    const keyName = key ? `${key.name} (${key.prefix}…)` : null;
                    return (
                      <tr key={row.id}>
                        <td className="nowrap">
                          <a href={`/settings/usage/requests/${row.id}`} aria-label={`Request ${row.requestId}`}>
                            <Time value={row.createdAt} />
                          </a>
                        </td>
                        {/* One line a row: a long path is cut, whole in its title and on the request's page. */}
                        <td className="truncate">
                          <code title={request}>{request}</code>
                        </td>
                        <td className="nowrap">
                          <span className={`badge ${row.status >= 400 ? "error" : "ok"}`}>{row.status}</span>
                          {row.errorCode ? <code> {row.errorCode}</code> : null}
                        </td>
                        <td className="num nowrap">{formatDuration(row.durationMs)}</td>
                        <td className="nowrap">
                          {keyName ? (
                            <span className="ellipsis" title={keyName}>
                              {keyName}
                            </span>
                          ) : (
                            <span className="muted">—</span>
                          )}
                          {row.isTest ? <span className="badge test"> test</span> : null}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          <nav className="pager" aria-label="Request log pages">
            {params.cursor ? <a href={usageHref({ ...params, cursor: "" })}>Newest calls</a> : null}
            {log.hasMore && log.nextCursor ? (
              <a href={usageHref({ ...params, cursor: log.nextCursor })} data-testid="older">
                Older calls →
              </a>
            ) : null}
          </nav>
        </section>
      ) : null}

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
    </>
  );
}

/** A labelled select of a GET form: `options` are `[value, label]` pairs. */
function SelectField(props: {
  id: string;
  label: string;
  name: string;
  value: string;
  options: ReadonlyArray<readonly [string, string]>;
}) {
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} name={props.name} defaultValue={props.value}>
        {props.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The chart, the totals and the top errors of the range. */
function UsageSummary({ series, params }: { series: Series; params: UsageParams }) {
  const { totals } = series;
  const span = `${bucketLabel(series.from)} – ${bucketLabel(series.to)} UTC`;
  return (
    <section aria-labelledby="chart-heading">
      <h2 id="chart-heading">Requests over time</h2>
      <dl className="usage-totals" data-testid="usage-totals">
        <div>
          <dt>Requests</dt>
          <dd data-testid="total-requests">{totals.requests.toLocaleString("en-GB")}</dd>
        </div>
        <div>
          <dt>Errors (4xx + 5xx)</dt>
          <dd>{(totals.byStatusClass["4xx"] + totals.byStatusClass["5xx"]).toLocaleString("en-GB")}</dd>
        </div>
        <div>
          <dt>p95 latency</dt>
          <dd>{totals.p95Ms === null ? "—" : formatDuration(totals.p95Ms)}</dd>
        </div>
      </dl>
      <StackedBarChart
        testId="usage-chart"
        title={`Calls per ${series.granularity} as 2xx, 3xx, 4xx and 5xx, ${span}`}
        summary={`${totals.requests} requests: ${totals.byStatusClass["2xx"]} 2xx, ${totals.byStatusClass["3xx"]} 3xx, ${totals.byStatusClass["4xx"]} 4xx, ${totals.byStatusClass["5xx"]} 5xx; p95 latency ${totals.p95Ms ?? "—"} ms.`}
        series={SERIES}
        unit={`requests per ${series.granularity}`}
        line={{ label: "p95 latency", unit: "ms" }}
        barHeading="Period starting (UTC)"
        linkLabel="Show only this period"
        bars={series.buckets.map((bucket) => ({
          label: bucketLabel(bucket.start),
          href: usageHref({ ...params, range: "custom", from: bucket.start, to: bucket.end, cursor: "" }),
          values: bucket.byStatusClass,
          line: bucket.p95Ms,
        }))}
      />
      <h3>Top errors</h3>
      {series.topErrors.length === 0 ? (
        <p className="muted" data-testid="top-errors-none">
          No errors in this range.
        </p>
      ) : (
        <ol className="top-errors" data-testid="top-errors">
          {series.topErrors.map((entry) => (
            <li key={`${entry.status} ${entry.errorCode}`}>
              <a href={usageHref({ ...params, status: String(entry.status), cursor: "" })}>
                <span className="badge error">{entry.status}</span> <code>{entry.errorCode ?? "—"}</code>
              </a>{" "}
              {entry.requests.toLocaleString("en-GB")}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
