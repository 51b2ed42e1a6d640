// The usage page's query string: range and filters in, links out, so every control is a plain link or GET form.

/** The ranges the page offers by name, ms. */
const SPANS = { "24h": 24 * 60 * 60 * 1000, "7d": 7 * 24 * 60 * 60 * 1000, "30d": 30 * 24 * 60 * 60 * 1000 } as const;

/** The usage page's parameters, read from its query string. */
export interface UsageParams {
  /** `24h`, `7d`, `30d` or `custom`. */
  range: keyof typeof SPANS | "custom";
  /** Start of the range, ISO 8601 (as typed, when it does not parse). */
  from: string;
  /** End of the range, ISO 8601. */
  to: string;
  /** `from` and `to` as a `datetime-local` value (UTC), for the custom inputs. */
  customFrom: string;
  customTo: string;
  key: string;
  status: string;
  method: string;
  path: string;
  cursor: string;
}

function one(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? "";
}

// A datetime-local value has no zone: the page's times are UTC.
function instant(value: string): string {
  if (!value) return "";
  const date = new Date(/(?:Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

function local(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString().slice(0, 16);
}

/**
 * The page's parameters: a named range (`range=7d`) counts back from now; `range=custom`, or `from`/`to` without a
 * named range, is the custom range (UTC; a bar's link carries its bucket's bounds).
 */
export function usageParams(search: Record<string, string | string[] | undefined>, now = new Date()): UsageParams {
  const named = one(search.range);
  const from = instant(one(search.from));
  const to = instant(one(search.to));
  const custom = named === "custom" || (!(named in SPANS) && Boolean(from || to));
  const range: UsageParams["range"] = custom ? "custom" : named in SPANS ? (named as keyof typeof SPANS) : "24h";
  const span = range === "custom" ? SPANS["24h"] : SPANS[range];
  const end = range === "custom" && to ? to : now.toISOString();
  const start = range === "custom" && from ? from : new Date(new Date(end).getTime() - span).toISOString();
  return {
    range,
    from: start,
    to: end,
    customFrom: range === "custom" ? local(start) : "",
    customTo: range === "custom" ? local(end) : "",
    key: one(search.key),
    status: one(search.status),
    method: one(search.method).toUpperCase(),
    path: one(search.path),
    cursor: one(search.cursor),
  };
}

/** A link to the usage page (or its export, `base`) with these parameters; a named range leaves out from and to. */
export function usageHref(params: Partial<UsageParams>, base = "/settings/usage"): string {
  const custom = params.range === "custom" || base !== "/settings/usage";
  const entries: Array<[string, string | undefined]> = [
    ["range", custom ? (base === "/settings/usage" ? "custom" : undefined) : params.range],
    ["from", custom ? params.from : undefined],
    ["to", custom ? params.to : undefined],
    ["key", params.key],
    ["status", params.status],
    ["method", params.method],
    ["path", params.path],
    ["cursor", params.cursor],
  ];
  const search = new URLSearchParams(
    entries.filter((entry): entry is [string, string] => Boolean(entry[1]) && entry[1] !== "24h"),
  );
  const text = search.toString();
  return text ? `${base}?${text}` : base;
}

const LABEL = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
  timeZone: "UTC",
});

/** A bucket's start as its label: `26 Nov, 10:30`. */
export function bucketLabel(iso: string): string {
  return LABEL.format(new Date(iso));
}
