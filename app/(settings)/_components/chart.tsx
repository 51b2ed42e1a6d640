// A server-rendered chart (docs/architecture.md, "Usage: the roll-up, the chart and the export"): stacked bars with an
// optional line on a second axis, as plain SVG with no script. The SVG stretches to its box (preserveAspectRatio none,
// strokes that do not scale) and every text is HTML around it, so labels keep their size from 390 px up. Screen readers
// get the title, a summary and a table of the same numbers.
import type { ReactNode } from "react";

/** One stacked series: its key in each bar's `values`, its legend label and its CSS class (colour). */
export interface ChartSeries {
  key: string;
  label: string;
  className: string;
}

/** One bar: its axis and table label, where a click on it goes (optional) and a value per series; `line` per bar. */
export interface ChartBar {
  label: string;
  href?: string;
  values: Record<string, number>;
  line?: number | null;
}

/** Props of {@link StackedBarChart}. */
export interface StackedBarChartProps {
  /** Accessible name of the chart (the SVG's `<title>`) and caption of its table. */
  title: string;
  /** One sentence summing the chart up (the SVG's `<desc>`). */
  summary: string;
  series: ChartSeries[];
  bars: ChartBar[];
  /** The line's name and unit (`p95 latency`, `ms`); without it no line is drawn. */
  line?: { label: string; unit: string };
  /** Unit of the bars' values, for the axis (`requests`). */
  unit: string;
  /** Label of the bars' column in the table (`Period`). */
  barHeading: string;
  /** What a bar link does, for its title (`Show only this period`). */
  linkLabel?: string;
  /** Test id of the figure. */
  testId?: string;
}

const BAR = 10;
const GAP = 2;
const HEIGHT = 100;

function format(value: number): string {
  return value.toLocaleString("en-GB");
}

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 5, 10].find((step) => step * power >= max) ?? 10) * power;
}

/**
 * Stacked bars (one stack per {@link ChartBar}, series bottom-up in the order given) with an optional line on its own
 * axis, for the usage chart and the webhook delivery charts. A bar with `href` is a link (works without JavaScript);
 * the visually hidden table repeats every number and link for screen readers.
 */
export function StackedBarChart(props: StackedBarChartProps): ReactNode {
  const { bars, series, line } = props;
  const totals = bars.map((bar) => series.reduce((sum, s) => sum + (bar.values[s.key] ?? 0), 0));
  // Counts are whole: an axis of at least 2 keeps its middle label a whole number.
  const barMax = niceMax(Math.max(2, ...totals));
  const lineValues = bars.map((bar) => bar.line ?? null);
  const lineMax = niceMax(Math.max(0, ...lineValues.map((value) => value ?? 0)));
  const width = Math.max(1, bars.length) * BAR;
  const y = (value: number, max: number) => HEIGHT - (value / max) * HEIGHT;
  const id = (props.testId ?? "chart").replace(/[^\w-]/g, "");
  // The line breaks over bars without a value; a lone value is a short level stroke across its bar.
  const runs: Array<Array<{ x: number; y: number }>> = [[]];
  lineValues.forEach((value, index) => {
    if (value === null) runs.push([]);
    else runs.at(-1)?.push({ x: index * BAR + BAR / 2, y: y(value, lineMax) });
  });
  const first = bars[0]?.label ?? "";
  const middle = bars[Math.floor(bars.length / 2)]?.label ?? "";
  const last = bars.at(-1)?.label ?? "";

  return (
    <figure className="chart" data-testid={props.testId}>
      <div className="chart-body">
        <div className="chart-axis" aria-hidden="true">
          <span>{format(barMax)}</span>
          <span>{format(barMax / 2)}</span>
          <span>0</span>
        </div>
        <div className="chart-plot">
          <svg
            role="img"
            aria-labelledby={`${id}-title ${id}-desc`}
            viewBox={`0 0 ${width} ${HEIGHT}`}
            preserveAspectRatio="none"
            width="100%"
            height="100%"
          >
            <title id={`${id}-title`}>{props.title}</title>
            <desc id={`${id}-desc`}>{props.summary}</desc>
            {[0, 0.5, 1].map((fraction) => (
              <line
                key={fraction}
                className="chart-grid"
                x1={0}
                x2={width}
                y1={HEIGHT * fraction}
                y2={HEIGHT * fraction}
                vectorEffect="non-scaling-stroke"
              />
            ))}
            {bars.map((bar, index) => {
              let base = HEIGHT;
              const segments = series.map((s) => {
                const value = bar.values[s.key] ?? 0;
                const height = (value / barMax) * HEIGHT;
                base -= height;
                return value > 0 ? (
                  <rect
                    key={s.key}
                    className={s.className}
                    x={index * BAR + GAP / 2}
                    y={base}
                    width={BAR - GAP}
                    height={height}
                  />
                ) : null;
              });
              const tooltip = `${bar.label}: ${series.map((s) => `${format(bar.values[s.key] ?? 0)} ${s.label}`).join(", ")}${
                line && bar.line !== undefined && bar.line !== null
                  ? `, ${line.label} ${format(bar.line)} ${line.unit}`
                  : ""
              }`;
              const content = (
                <>
                  <title>{tooltip}</title>
                  <rect className="chart-hit" x={index * BAR} y={0} width={BAR} height={HEIGHT} />
                  {segments}
                </>
              );
              return bar.href ? (
                <a key={bar.label} href={bar.href} data-bar={index} data-total={totals[index]} aria-label={tooltip}>
                  {content}
                </a>
              ) : (
                <g key={bar.label} data-bar={index} data-total={totals[index]}>
                  {content}
                </g>
              );
            })}
            {line
              ? runs
                  .filter((run) => run.length > 0)
                  .map((run) => {
                    const drawn =
                      run.length > 1
                        ? run
                        : [0, BAR].map((dx) => ({ x: (run[0]?.x ?? 0) - BAR / 2 + dx, y: run[0]?.y ?? 0 }));
                    return (
                      <polyline
                        key={`${run[0]?.x}`}
                        className="chart-line"
                        pointerEvents="none"
                        points={drawn.map((point) => `${point.x},${point.y.toFixed(2)}`).join(" ")}
                        fill="none"
                        vectorEffect="non-scaling-stroke"
                      />
                    );
                  })
              : null}
          </svg>
        </div>
        {line ? (
          <div className="chart-axis chart-axis-line" aria-hidden="true">
            <span>
              {format(lineMax)} {line.unit}
            </span>
            <span>{format(lineMax / 2)}</span>
            <span>0</span>
          </div>
        ) : null}
      </div>
      <div className="chart-x" aria-hidden="true">
        <span>{first}</span>
        {bars.length > 2 ? <span>{middle}</span> : null}
        {bars.length > 1 ? <span>{last}</span> : null}
      </div>
      <figcaption className="chart-legend">
        {series.map((s) => (
          <span key={s.key}>
            <span className={`chart-swatch ${s.className}`} aria-hidden="true" /> {s.label}
          </span>
        ))}
        {line ? (
          <span>
            <span className="chart-swatch chart-swatch-line" aria-hidden="true" /> {line.label} ({line.unit}, right
            axis)
          </span>
        ) : null}
        <span className="muted"> {props.unit}</span>
      </figcaption>
      {/* Wrapped: a table ignores the 1 px width of .visually-hidden and would widen the page. */}
      <div className="visually-hidden">
        <table>
          <caption>{props.title}</caption>
          <thead>
            <tr>
              <th scope="col">{props.barHeading}</th>
              {series.map((s) => (
                <th key={s.key} scope="col">
                  {s.label}
                </th>
              ))}
              {line ? (
                <th scope="col">
                  {line.label} ({line.unit})
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {bars.map((bar) => (
              <tr key={bar.label}>
                <th scope="row">
                  {bar.href ? (
                    <a href={bar.href} title={props.linkLabel}>
                      {bar.label}
                    </a>
                  ) : (
                    bar.label
                  )}
                </th>
                {series.map((s) => (
                  <td key={s.key}>{format(bar.values[s.key] ?? 0)}</td>
                ))}
                {line ? <td>{bar.line === null || bar.line === undefined ? "—" : format(bar.line)}</td> : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
