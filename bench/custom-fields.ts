// Custom fields in the benchmark (docs/architecture.md, "Custom fields"): the twenty fields every account of the
// 100,000-account organisation has, the SQL that gives the seeded rows their values, and the measures: a list filtered
// by a custom field against the same list filtered by an indexed column of the same selectivity (target ≤ 1.5×), a
// range filter and a sort by a custom field (reported), and creates with twenty custom field values against creates
// without (target ≤ 1.2×).
import { Agent } from "node:http";
import type { CustomFieldCreate } from "../server/records/custom-fields/schema";
import { median, quantile, send } from "./load";

/** The twenty fields of the benchmark's accounts: every type, `tier` with four options like the lifecycle's four. */
export const BENCH_FIELDS: ReadonlyArray<Omit<CustomFieldCreate, "resource">> = [
  {
    key: "tier",
    label: "Tier",
    type: "select",
    options: ["gold", "silver", "bronze", "platinum"].map((value) => ({ value, label: value })),
  },
  { key: "seats", label: "Seats", type: "number" },
  { key: "renewal", label: "Renewal", type: "date" },
  // Searchable, as a PSA's id usually is: a write then also indexes it for quick search.
  { key: "psa_id", label: "PSA id", type: "text", searchable: true },
  { key: "managed", label: "Managed", type: "boolean" },
  { key: "arr", label: "ARR", type: "currency" },
  { key: "portal", label: "Portal", type: "url" },
  { key: "billing_email", label: "Billing email", type: "email" },
  { key: "onboarded_at", label: "Onboarded", type: "datetime" },
  {
    key: "stack",
    label: "Stack",
    type: "multiSelect",
    options: ["m365", "gws", "edr", "backup"].map((value) => ({ value, label: value })),
  },
  ...Array.from({ length: 10 }, (_, i) => ({ key: `metric_${i}`, label: `Metric ${i}`, type: "number" as const })),
];

/** The twenty values of row `i` (SQL over `i`), as the seed stores them: the same shapes the API writes. */
export const BENCH_VALUES_SQL = `jsonb_build_object(
  'tier', (ARRAY['gold','silver','bronze','platinum'])[1 + i % 4],
  'seats', (i * 37) % 5000,
  'renewal', to_char(DATE '2026-01-01' + (i % 700), 'YYYY-MM-DD'),
  'psa_id', 'CW-' || i,
  'managed', i % 3 = 0,
  'arr', jsonb_build_object('amount', (i % 900) * 100, 'currency', 'EUR'),
  'portal', 'https://portal.example.com/' || i,
  'billing_email', 'billing' || i || '@example.com',
  'onboarded_at', to_char(TIMESTAMP '2025-01-01' + (i % 500) * INTERVAL '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'stack', jsonb_build_array((ARRAY['m365','gws'])[1 + i % 2], 'edr')
) || (SELECT jsonb_object_agg('metric_' || k, (i * (k + 3)) % 1000) FROM generate_series(0, 9) AS k)`;

/** Twenty values as a create sends them. */
function createValues(n: number): Record<string, unknown> {
  return {
    tier: "gold",
    seats: n % 500,
    renewal: "2027-03-31",
    psa_id: `CW-new-${n}`,
    managed: true,
    arr: { amount: 42_000, currency: "EUR" },
    portal: "https://portal.example.com/new",
    billing_email: "billing@new.example.com",
    onboarded_at: "2026-11-01T09:00:00Z",
    stack: ["m365", "edr"],
    ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`metric_${i}`, n + i])),
  };
}

/** What {@link measureCustomFields} reports: milliseconds (medians, p90s) and the two ratios with targets. */
export interface CustomFieldsResult {
  list: { customMs: number; customP90: number; indexedMs: number; indexedP90: number; ratio: number };
  rangeMs: number;
  sortMs: number;
  standardSortMs: number;
  writes: { withMs: number; withP90: number; withoutMs: number; withoutP90: number; ratio: number };
}

/**
 * Runs the custom field measures against `origin` (npm start), one keep-alive connection, each pair interleaved so
 * drift hits both sides alike.
 * @param pagedKey a key of the 100,000-account organisation (accounts:write); `fieldsKey` one of an organisation with
 *        the same twenty fields and few accounts, for the creates.
 */
export async function measureCustomFields(options: {
  origin: string;
  pagedKey: string;
  fieldsKey: string;
  warmup: number;
  runs: number;
  log: (line: string) => void;
}): Promise<CustomFieldsResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const timed = async (key: string, pathAndQuery: string, init: { method?: string; body?: unknown } = {}) => {
    const response = await send(agent, `${options.origin}/api/v1${pathAndQuery}`, {
      method: init.method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    if (response.status >= 300)
      throw new Error(`${pathAndQuery} answered ${response.status}: ${response.body.slice(0, 300)}`);
    return response.ms;
  };
  const pairs = async (a: () => Promise<number>, b: () => Promise<number>, runs = options.runs) => {
    const first: number[] = [];
    const second: number[] = [];
    for (let round = 1; round <= options.warmup + runs; round++) {
      const x = await a();
      const y = await b();
      if (round <= options.warmup) continue;
      first.push(x);
      second.push(y);
    }
    return { first, second };
  };

  const list = await pairs(
    () => timed(options.pagedKey, "/accounts?limit=50&customFields.tier=gold"),
    () => timed(options.pagedKey, "/accounts?limit=50&lifecycle=ACTIVE"),
  );
  const sorts = await pairs(
    () => timed(options.pagedKey, "/accounts?limit=50&sort=customFields.seats:desc"),
    () => timed(options.pagedKey, "/accounts?limit=50&sort=employeeCount:desc"),
    Math.max(5, Math.round(options.runs / 4)),
  );
  const range = await pairs(
    () => timed(options.pagedKey, "/accounts?limit=50&customFields.seats[gte]=4900"),
    () => Promise.resolve(0),
  );
  let n = 0;
  const writes = await pairs(
    () =>
      timed(options.fieldsKey, "/accounts", {
        method: "POST",
        body: { name: `With ${n++}`, customFields: createValues(n) },
      }),
    () => timed(options.fieldsKey, "/accounts", { method: "POST", body: { name: `Without ${n++}` } }),
    options.runs * 3,
  );
  agent.destroy();

  const result: CustomFieldsResult = {
    list: {
      customMs: median(list.first),
      customP90: quantile(list.first, 0.9),
      indexedMs: median(list.second),
      indexedP90: quantile(list.second, 0.9),
      ratio: median(list.first) / median(list.second),
    },
    rangeMs: median(range.first),
    sortMs: median(sorts.first),
    standardSortMs: median(sorts.second),
    writes: {
      withMs: median(writes.first),
      withP90: quantile(writes.first, 0.9),
      withoutMs: median(writes.second),
      withoutP90: quantile(writes.second, 0.9),
      ratio: median(writes.first) / median(writes.second),
    },
  };
  options.log(
    `custom fields: list by customFields.tier ${result.list.customMs.toFixed(2)} ms vs lifecycle ${result.list.indexedMs.toFixed(2)} ms; create with 20 values ${result.writes.withMs.toFixed(2)} ms vs none ${result.writes.withoutMs.toFixed(2)} ms`,
  );
  return result;
}
