import { formatTime, isoTime } from "../_lib/format";

/** A `<time>` element showing a UTC time; a dash when there is none. */
export function Time({ value }: { value: Date | string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  return <time dateTime={isoTime(value)}>{formatTime(value)}</time>;
}
