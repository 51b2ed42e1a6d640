// The service's metrics (docs/architecture.md, "Observability"): recorded only while telemetry is on, through the
// OpenTelemetry API, and exported by whatever readers ./telemetry.ts set up (OTLP, Prometheus). Labels carry route
// templates and small fixed sets of values, never ids.
import { type Counter, type Histogram, type Meter, metrics, type ObservableGauge } from "@opentelemetry/api";
import { metricsOn } from "./telemetry";

/** Instrumentation scope of every metric of the service. */
const SCOPE = "msp-crm-api";

// OpenTelemetry's advice for http.server.request.duration (semantic conventions), in seconds.
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
// Webhook attempts last up to the 10 s timeout.
const ATTEMPT_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 7.5, 10];

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]);

/**
 * The method as the semantic conventions record it: one of the nine HTTP methods, else `_OTHER` (a client can send
 * any token as a method, which must not make a label value). Source: docs/architecture.md, "Observability".
 */
export function knownMethod(method: string): string {
  return METHODS.has(method) ? method : "_OTHER";
}

interface Instruments {
  meter: Meter;
  requestDuration: Histogram;
  attemptDuration: Histogram;
  rateLimitRefusals: Counter;
  outboxBacklog: ObservableGauge;
  outboxOldestAge: ObservableGauge;
}

// Created on first use: the meter provider is registered by startTelemetry, which runs before any request.
let instruments: Instruments | undefined;

function meterInstruments(): Instruments {
  if (instruments) return instruments;
  const meter = metrics.getMeter(SCOPE);
  instruments = {
    meter,
    requestDuration: meter.createHistogram("http.server.request.duration", {
      description: "Duration of HTTP server requests.",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
    }),
    attemptDuration: meter.createHistogram("crm.webhook.delivery_attempt.duration", {
      description: "Duration of webhook delivery attempts, by outcome.",
      unit: "s",
      advice: { explicitBucketBoundaries: ATTEMPT_BUCKETS_S },
    }),
    rateLimitRefusals: meter.createCounter("crm.rate_limit.refusals", {
      description: "Requests refused with 429 rate_limited.",
      unit: "{request}",
    }),
    outboxBacklog: meter.createObservableGauge("crm.outbox.backlog", {
      description: "Outbox events waiting to be handed to the webhook worker.",
      unit: "{event}",
    }),
    outboxOldestAge: meter.createObservableGauge("crm.outbox.oldest_age", {
      description: "Age of the oldest outbox event waiting to be handed to the webhook worker; 0 when none waits.",
      unit: "s",
    }),
  };
  return instruments;
}

/**
 * Records one answered HTTP request in `http.server.request.duration` (histogram, seconds) with
 * `http.request.method` ({@link knownMethod}), `http.route` (the route template, e.g. `/api/v1/accounts/{id}`;
 * left out when no route matched) and `http.response.status_code`. Nothing is recorded while metrics are off.
 * Source: docs/architecture.md, "Observability" (OpenTelemetry HTTP semantic conventions).
 */
export function recordRequest(method: string, route: string | null, status: number, seconds: number): void {
  if (!metricsOn()) return;
  meterInstruments().requestDuration.record(seconds, {
    "http.request.method": knownMethod(method),
    ...(route ? { "http.route": route } : {}),
    "http.response.status_code": status,
  });
}

/**
 * How a webhook delivery attempt ended: `success` (2xx), `http_error` (another status), `timeout`, `network_error`
 * or `refused` (not sent: invalid URL or an address the SSRF filter blocks).
 */
export type AttemptOutcome = "success" | "http_error" | "timeout" | "network_error" | "refused";

/**
 * Records one webhook delivery attempt in `crm.webhook.delivery_attempt.duration` (histogram, seconds) with
 * `crm.webhook.outcome` ({@link AttemptOutcome}), `crm.webhook.mode` (`scheduled`, `manual` redelivery or `single`
 * test event) and `http.response.status_code` when the receiver answered. Its count by outcome is the number of
 * attempts. Nothing is recorded while metrics are off.
 * Source: docs/architecture.md, "Observability".
 */
export function recordDeliveryAttempt(attempt: {
  outcome: AttemptOutcome;
  mode: string;
  status: number | null;
  seconds: number;
}): void {
  if (!metricsOn()) return;
  meterInstruments().attemptDuration.record(attempt.seconds, {
    "crm.webhook.outcome": attempt.outcome,
    "crm.webhook.mode": attempt.mode,
    ...(attempt.status === null ? {} : { "http.response.status_code": attempt.status }),
  });
}

/**
 * Counts one request refused by the rate limit (429) in `crm.rate_limit.refusals`, with `crm.rate_limit.subject`:
 * `key` (the key's or its organisation's window was full) or `anonymous` (the client address's window). Nothing is
 * recorded while metrics are off.
 * Source: docs/api-contract.md §8; docs/architecture.md, "Observability".
 */
export function recordRateLimitRefusal(subject: "key" | "anonymous"): void {
  if (!metricsOn()) return;
  meterInstruments().rateLimitRefusals.add(1, { "crm.rate_limit.subject": subject });
}

/** The outbox as the gauges report it (docs/architecture.md, "Observability"). */
export interface OutboxState {
  /** Events waiting to be handed to the worker. */
  waiting: number;
  /** Age of the oldest of them, seconds; 0 when none waits. */
  oldestAgeSeconds: number;
}

/** How long one reading of the outbox is reused, ms: scrapes and exports never query more often than this. */
const OUTBOX_READING_TTL_MS = 15_000;

/**
 * Reports the outbox through the observable gauges `crm.outbox.backlog` (events) and `crm.outbox.oldest_age`
 * (seconds), read with `read` at most once per {@link OUTBOX_READING_TTL_MS} whatever the number of scrapes and
 * exports; a reading that fails or takes over 2 s reports the last good one (none before the first). Every instance
 * reports the same shared outbox, so aggregate with `max`, not `sum`. Registers once per process; nothing while
 * metrics are off.
 * Source: docs/architecture.md, "Observability" and "Webhooks and the outbox".
 */
export function observeOutbox(read: () => Promise<OutboxState>): void {
  if (!metricsOn()) return;
  const holder = globalThis as unknown as { __crmOutboxObserved?: boolean };
  if (holder.__crmOutboxObserved) return;
  holder.__crmOutboxObserved = true;
  const { meter, outboxBacklog, outboxOldestAge } = meterInstruments();
  let last: OutboxState | null = null;
  let readAt = 0;
  let pending: Promise<void> | null = null;
  const refresh = () => {
    pending ??= read()
      .then((state) => {
        last = state;
      })
      .catch(() => undefined)
      .finally(() => {
        readAt = Date.now();
        pending = null;
      });
    return pending;
  };
  meter.addBatchObservableCallback(
    async (observer) => {
      if (Date.now() - readAt >= OUTBOX_READING_TTL_MS) {
        await Promise.race([refresh(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      }
      if (!last) return;
      observer.observe(outboxBacklog, last.waiting);
      observer.observe(outboxOldestAge, last.oldestAgeSeconds);
    },
    [outboxBacklog, outboxOldestAge],
  );
}
