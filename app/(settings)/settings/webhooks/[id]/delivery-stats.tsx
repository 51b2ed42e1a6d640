import type { EndpointStats, StatsBucket } from "../../../../../server/webhooks/stats";
import { type ChartSeries, StackedBarChart } from "../../../_components/chart";
import { formatDuration, formatTime } from "../../../_lib/format";

const SERIES: ChartSeries[] = [
  { key: "succeeded", label: "succeeded", className: "chart-succeeded" },
  { key: "failed", label: "failed", className: "chart-failed" },
  { key: "filtered", label: "filtered out", className: "chart-filtered" },
];

/** The ranges the statistics offer, with their labels. */
export const RANGE_LABELS = { "24h": "Last 24 hours", "7d": "Last 7 days", "30d": "Last 30 days", custom: "Custom" };

const HOUR_MINUTE = new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });
const DAY_HOUR = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
});

/** A bucket's label: its start, with the day unless the buckets are under a day apart within one day. */
export function bucketLabel(bucket: StatsBucket, stats: EndpointStats): string {
  const sameDay = stats.to.getTime() - stats.from.getTime() <= 24 * 3_600_000;
  return `${(sameDay ? HOUR_MINUTE : DAY_HOUR).format(bucket.start)} UTC`;
}

const percent = (value: number | null) => (value === null ? "—" : `${value.toLocaleString("en-GB")} %`);

/**
 * An endpoint's delivery statistics (docs/architecture.md, "Webhooks and the outbox"): the totals of the window as
 * figures, every bucket as a chart (succeeded, failed and filtered out stacked, the error rate as a line), and the
 * buckets with any delivery or filtered event as a table with what the chart leaves out (being retried, p95 attempt
 * duration).
 */
export function DeliveryStats({ stats }: { stats: EndpointStats }) {
  const { totals } = stats;
  const active = stats.buckets.filter(
    (bucket) => bucket.succeeded + bucket.failed + bucket.pending + bucket.filtered > 0,
  );
  const width = stats.bucketMs >= 3_600_000 ? `${stats.bucketMs / 3_600_000} h` : `${stats.bucketMs / 60_000} min`;
  return (
    <>
      <dl className="meta" data-testid="stats-totals">
        <dt>Deliveries</dt>
        <dd>
          {(totals.succeeded + totals.failed + totals.pending).toLocaleString("en-GB")}:{" "}
          {totals.succeeded.toLocaleString("en-GB")} succeeded, {totals.failed.toLocaleString("en-GB")} failed,{" "}
          {totals.pending.toLocaleString("en-GB")} being retried
        </dd>
        <dt>Filtered out</dt>
        <dd>{totals.filtered.toLocaleString("en-GB")} updates its field filter dropped</dd>
        <dt>Error rate</dt>
        <dd data-testid="stats-error-rate">{percent(totals.errorRate)} of finished deliveries failed</dd>
        <dt>p95 attempt duration</dt>
        <dd>
          {totals.p95Ms === null ? "—" : formatDuration(totals.p95Ms)} over {totals.attempts.toLocaleString("en-GB")}{" "}
          attempts
        </dd>
      </dl>
      <StackedBarChart
        testId="stats-chart"
        title={`Deliveries per ${width} as succeeded, failed and filtered out, with the error rate, ${formatTime(stats.from)} to ${formatTime(stats.to)}`}
        summary={`${totals.succeeded} succeeded, ${totals.failed} failed, ${totals.filtered} filtered out, ${totals.pending} being retried; error rate ${percent(totals.errorRate)}; p95 attempt duration ${totals.p95Ms === null ? "—" : formatDuration(totals.p95Ms)}.`}
        series={SERIES}
        unit={`deliveries per ${width}`}
        line={{ label: "error rate", unit: "%" }}
        barHeading="Period starting (UTC)"
        bars={stats.buckets.map((bucket) => ({
          label: bucketLabel(bucket, stats),
          values: { succeeded: bucket.succeeded, failed: bucket.failed, filtered: bucket.filtered },
          line: bucket.errorRate,
        }))}
      />
      {active.length === 0 ? (
        <p className="muted" data-testid="stats-empty">
          No deliveries in this range.
        </p>
      ) : (
        <div className="table-wrap">
          <table data-testid="stats-buckets">
            <caption>Deliveries per {width}, periods with any (by when the delivery was made)</caption>
            <thead>
              <tr>
                <th scope="col">Period from</th>
                <th scope="col">Succeeded</th>
                <th scope="col">Failed</th>
                <th scope="col">Filtered out</th>
                <th scope="col">Being retried</th>
                <th scope="col">Error rate</th>
                <th scope="col">p95</th>
              </tr>
            </thead>
            <tbody>
              {active.map((bucket) => (
                <tr key={bucket.start.toISOString()}>
                  <th scope="row" className="nowrap">
                    <time dateTime={bucket.start.toISOString()}>{bucketLabel(bucket, stats)}</time>
                  </th>
                  <td className="num">{bucket.succeeded}</td>
                  <td className="num">{bucket.failed}</td>
                  <td className="num">{bucket.filtered}</td>
                  <td className="num">{bucket.pending}</td>
                  <td className="num">{percent(bucket.errorRate)}</td>
                  <td className="num nowrap">{bucket.p95Ms === null ? "—" : formatDuration(bucket.p95Ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
