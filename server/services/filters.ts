// The Prisma conditions of list filters (docs/api-contract.md §4.9.3): one builder for every list.
import { containsInsensitive, equalsInsensitive } from "../db/like";
import { type FilterTable, filterTerms } from "../schemas/filters";

type Where = Record<string, unknown>;

/**
 * The conditions of the `field[op]` filters a parsed list query holds, to add to the list's `filters`: text `eq` and
 * `in` match case-insensitively and literally, `contains` literally and case-insensitively; an external key's `eq`,
 * `ne` and `in` compare exactly, as its uniqueness does, on values the query schema normalised to Unicode NFC
 * (docs/architecture.md, "Data and migrations"); `ne` does not match records whose field is empty (SQL's comparison
 * with NULL); dates are compared as instants.
 */
export function filterWhere(query: Readonly<Record<string, unknown>>, table: FilterTable): Where[] {
  return filterTerms(query, table).map(({ field, op, kind, value }) => {
    const read = (text: unknown): unknown =>
      kind === "number" ? Number(text) : kind === "date" ? new Date(String(text)) : String(text);
    const caseless = kind === "text";
    const equals = (text: string) => (caseless ? equalsInsensitive(text) : read(text));
    switch (op) {
      case "eq":
        return { [field]: equals(String(value)) };
      case "ne":
        return { NOT: { [field]: equals(String(value)) } };
      case "in": {
        const values = String(value).split(",");
        return caseless
          ? { OR: values.map((one) => ({ [field]: equalsInsensitive(one) })) }
          : { [field]: { in: values.map(read) } };
      }
      case "contains":
        return { [field]: containsInsensitive(String(value)) };
      default:
        return { [field]: { [op]: read(value) } };
    }
  });
}
