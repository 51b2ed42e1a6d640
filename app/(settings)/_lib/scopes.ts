import { DEPRECATED_SCOPES, SCOPES } from "../../../server/platform/api-keys/scopes";

/** One row of the scope picker: the scope, what it grants (docs/api-contract.md §5.7) and what it implies. */
export interface ScopeOption {
  scope: string;
  grants: string;
  /**
   * docs/api-contract.md §5.5: `x:write` ⇒ `x:read`; `admin:read` ⇒ every `:read`. Null when it implies nothing more.
   */
  implies: string | null;
}

/** A deprecated scope with how key creation treats it (docs/api-contract.md §5.8). */
export interface DeprecatedScopeOption {
  scope: string;
  accepted: boolean;
  note: string;
}

/** What a scope implies beyond itself, in words (docs/api-contract.md §5.5). */
export function scopeImplication(scope: string): string | null {
  if (scope === "admin:read") return "every :read scope";
  const [resource, action] = scope.split(":");
  if (action === "write" && Object.hasOwn(SCOPES, `${resource}:read`)) return `${resource}:read`;
  return null;
}

/** The grantable scopes of docs/api-contract.md §5 in table order, for the picker. */
export const SCOPE_OPTIONS: ScopeOption[] = Object.entries(SCOPES).map(([scope, grants]) => ({
  scope,
  grants,
  implies: scopeImplication(scope),
}));

/** The deprecated scopes, for the picker's "deprecated" group. */
export const DEPRECATED_SCOPE_OPTIONS: DeprecatedScopeOption[] = Object.entries(DEPRECATED_SCOPES).map(
  ([scope, rule]) => ({ scope, accepted: rule.accepted, note: rule.note }),
);

/** The note shown next to a granted scope that grants nothing (`contracts:read`), else null. */
export function grantsNothingNote(scope: string): string | null {
  const rule = DEPRECATED_SCOPES[scope as keyof typeof DEPRECATED_SCOPES];
  return rule?.accepted ? rule.note : null;
}
