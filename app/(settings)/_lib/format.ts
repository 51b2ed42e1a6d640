const DATE_TIME = new Intl.DateTimeFormat("en-GB", {
  dateStyle: "medium",
  timeStyle: "medium",
  timeZone: "UTC",
});

/** A time as the settings pages show it: `21 Nov 2026, 12:15:42 UTC`. */
export function formatTime(date: Date | string | null | undefined): string {
  if (!date) return "—";
  return `${DATE_TIME.format(new Date(date))} UTC`;
}

/** ISO 8601 for `<time dateTime>`. */
export function isoTime(date: Date | string): string {
  return new Date(date).toISOString();
}

/** A duration in ms as `850 ms` or `1.2 s`. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** How long until `date`, roughly: `in 23 h`, `in 5 min`. */
export function formatRelativeFuture(date: Date): string {
  const ms = date.getTime() - Date.now();
  if (ms <= 0) return "now";
  const minutes = Math.round(ms / 60_000);
  return minutes < 90 ? `in ${minutes} min` : `in ${Math.round(minutes / 60)} h`;
}
