import { ApiError, type ErrorDetail } from "../errors";

/** A `field[op]` filter parameter (docs/api-contract.md §4.9.3): its field and operator. */
const FILTER_PARAM = /^(.+)\[([^\]]*)\]$/;

/**
 * Shortest name a prefix suggestion compares: below it almost every parameter would share a prefix (`l` of `limit`
 * and `lifecycle`), and the hint would be noise.
 */
const MIN_PREFIX = 3;

/**
 * The parameters of an operation an unknown query parameter most likely meant (docs/api-contract.md §4.12), best
 * first; none when nothing is close. A hint only: the unknown name is refused all the same, so that each filter has
 * one name. In this order:
 * 1. the same name in another case (`Limit` → `limit`, `Name[EQ]` → `name[eq]`);
 * 2. a plain parameter that is a prefix of the name or starts with it, at least 3 characters shared (`lifecycleStatus`
 *    → `lifecycle`, the filter of the record's `lifecycleStatus`; `sortBy` → `sort`; `owner` → `ownerId`), the longest
 *    shared first;
 * 3. the `field[op]` filters of a field of that name (`name` → `name[eq]`, `createdAt` → its four operators, an
 *    unknown operator `name[like]` → the field's operators).
 * @param name the parameter as the request sent it.
 * @param known the operation's query parameters as its OpenAPI document names them.
 */
export function suggestParameters(name: string, known: readonly string[]): string[] {
  const lower = name.toLowerCase();
  const same = known.find((candidate) => candidate.toLowerCase() === lower);
  if (same) return [same];
  const filter = FILTER_PARAM.exec(lower);
  const field = filter?.[1] ?? lower;
  const plain = known.filter((candidate) => !FILTER_PARAM.test(candidate));
  const plainField = plain.find((candidate) => candidate.toLowerCase() === field);
  if (plainField) return [plainField];
  const shared = (candidate: string) => {
    const other = candidate.toLowerCase();
    const length = Math.min(other.length, field.length);
    return length >= MIN_PREFIX && (other.startsWith(field) || field.startsWith(other)) ? length : 0;
  };
  const prefixed = plain
    .filter((candidate) => shared(candidate) > 0)
    .sort((a, b) => shared(b) - shared(a) || Math.abs(a.length - field.length) - Math.abs(b.length - field.length));
  if (prefixed[0] && !filter) return [prefixed[0]];
  const operators = known.filter((candidate) => FILTER_PARAM.exec(candidate)?.[1]?.toLowerCase() === field);
  const eq = operators.find((candidate) => candidate.endsWith("[eq]"));
  if (!filter && eq) return [eq];
  if (operators.length > 0) return operators;
  return prefixed.slice(0, 1);
}

/** `a`, `a or b`, `a, b or c`. */
function alternatives(names: readonly string[]): string {
  return names.length < 2 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
}

/**
 * The hint of an unknown query parameter: `did you mean lifecycle?`, `did you mean one of createdAt[gt], …?`
 * ({@link suggestParameters}); null when no parameter of the operation is close.
 */
export function parameterHint(name: string, known: readonly string[]): string | null {
  const suggestions = suggestParameters(name, known);
  if (suggestions.length === 0) return null;
  return `did you mean ${suggestions.length > 2 ? "one of " : ""}${alternatives(suggestions)}?`;
}

/**
 * The 422 `validation_error` of a query naming parameters the operation does not take (docs/api-contract.md §4.12):
 * the message names them with the parameter each most likely meant ("Unknown query parameter lifecycleStatus; did you
 * mean lifecycle?"), `details` holds one entry per name, its path the name and its message the hint
 * (`{ path: ["lifecycleStatus"], message: "unknown query parameter; did you mean lifecycle?" }`), then `otherDetails`
 * (the request's other validation issues).
 */
export function unknownParametersError(
  names: readonly string[],
  known: readonly string[],
  otherDetails: readonly ErrorDetail[] = [],
): ApiError {
  const described = names.map((name) => ({ name, suggestion: parameterHint(name, known) }));
  const named = described.map(({ name, suggestion }) => (suggestion ? `${name} (${suggestion})` : name));
  const first = described[0];
  const message =
    described.length === 1 && first
      ? `Unknown query parameter ${first.name}${first.suggestion ? `; ${first.suggestion}` : ""}`
      : `Unknown query parameters ${named.join(", ")}`;
  const details = described.map(({ name, suggestion }) => ({
    path: [name],
    message: suggestion ? `unknown query parameter; ${suggestion}` : "unknown query parameter",
  }));
  return new ApiError("validation_error", message, { details: [...details, ...otherDetails] });
}
