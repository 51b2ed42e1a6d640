import { log } from "../observability/logger";

const lastWarned = new Map<string, number>();

/** Interval between two warnings about the same topic, ms: an outage must not flood the log. */
export const WARN_INTERVAL_MS = 60_000;

/**
 * Logs a one-line JSON record (`level` default `warn`) on stderr unless the same `topic` was logged within
 * {@link WARN_INTERVAL_MS}, so a flapping store logs at most once a minute per topic. `fields` must not carry secrets
 * (tokens); hosts are fine, this is the server log.
 */
export function warnThrottled(topic: string, fields: Record<string, unknown>, level: "warn" | "info" = "warn"): void {
  const now = Date.now();
  const last = lastWarned.get(topic);
  if (last !== undefined && now - last < WARN_INTERVAL_MS) return;
  lastWarned.set(topic, now);
  const { message, ...rest } = fields;
  log()[level]({ topic, ...rest }, typeof message === "string" ? message : topic);
}
