import { ApiError } from "../errors";

/** Path prefix of the public API (docs/api-contract.md §9). */
export const API_PREFIX = "/api/v1";

/** A request target taken apart: the path below {@link API_PREFIX} as decoded segments, and the decoded query. */
export interface ParsedTarget {
  /** Decoded segments below `/api/v1`: `/accounts/c1` → `["accounts", "c1"]`; empty for `/api/v1` itself. */
  segments: string[];
  query: Map<string, string>;
}

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ApiError("bad_request", `Malformed percent-encoding in ${what}`, {
      details: [{ path: [], message: `${what} is not valid percent-encoded UTF-8` }],
    });
  }
}

/**
 * Parses a query string strictly (`a=1&b=x+y`): `+` is a space, percent-encoding must be valid UTF-8, and each name
 * may appear once.
 * @throws ApiError `bad_request` (400) for malformed percent-encoding; `validation_error` (422) for a repeated name.
 */
export function parseQuery(text: string): Map<string, string> {
  const query = new Map<string, string>();
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const rawName = equals < 0 ? pair : pair.slice(0, equals);
    const rawValue = equals < 0 ? "" : pair.slice(equals + 1);
    const name = decode(rawName.replaceAll("+", " "), "a query parameter name");
    const value = decode(rawValue.replaceAll("+", " "), `query parameter ${name}`);
    if (query.has(name)) {
      throw new ApiError("validation_error", `Query parameter ${name} is given more than once`, {
        details: [{ path: [name], message: "given more than once; send each parameter once" }],
      });
    }
    query.set(name, value);
  }
  return query;
}

/**
 * Takes a request target apart (absolute-form targets are reduced to their path): checks the `/api/v1` prefix, decodes
 * each path segment on its own (so an encoded `/` stays inside its segment) and the query.
 * @returns the segments below `/api/v1` and the query; null when the path is not under `/api/v1`.
 * @throws ApiError `bad_request` (400) for malformed percent-encoding or a `.`/`..` segment; `validation_error` (422)
 *         for a repeated query parameter.
 */
export function parseTarget(target: string): ParsedTarget | null {
  const relative = target.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, "");
  const hash = relative.indexOf("#");
  const withoutHash = hash < 0 ? relative : relative.slice(0, hash);
  const mark = withoutHash.indexOf("?");
  const rawPath = mark < 0 ? withoutHash : withoutHash.slice(0, mark);
  if (rawPath !== API_PREFIX && !rawPath.startsWith(`${API_PREFIX}/`)) return null;
  const raw = rawPath.slice(API_PREFIX.length).replace(/\/+$/, "");
  const segments =
    raw === ""
      ? []
      : raw
          .slice(1)
          .split("/")
          .map((segment) => decode(segment, "the path"));
  if (segments.some((segment) => segment === "." || segment === "..")) {
    throw new ApiError("bad_request", "Path segments . and .. are not allowed", {
      details: [{ path: [], message: "remove . and .. segments from the path" }],
    });
  }
  return { segments, query: parseQuery(mark < 0 ? "" : withoutHash.slice(mark + 1)) };
}
