import { ApiError } from "../../errors";

/** Every grantable scope with what it grants (docs/api-contract.md §5). */
export const SCOPES = {
  "accounts:read": "read accounts, sites, account details",
  "accounts:write": "create, update, soft-delete accounts",
  "contacts:read": "read contacts and account-contact relationships",
  "contacts:write": "create and update contacts",
  "deals:read": "read deals and stages",
  "deals:write": "create deals, change stages, mark Won/Lost",
  "health:read": "read churn-risk scores and signal breakdowns",
  "health:write": "push churn-risk signals",
  "touchpoints:read": "read touchpoints and activity timeline",
  "touchpoints:write": "log touchpoints",
  "devices:read": "read device inventory",
  "devices:write": "push and update devices, including bulk",
  "tasks:read": "read tasks",
  "tasks:write": "create, update, complete, delete tasks",
  "notes:read": "read notes on accounts, deals, contacts, leads",
  "notes:write": "create notes on any supported object",
  "mrr:read": "read MRR data and financial summaries",
  "leads:read": "read leads and ICP scores",
  "leads:write": "create and update leads",
  "compliance:read": "read compliance items and framework status",
  "events:read": "read the events feed: every change of every resource, deletions included",
  "webhooks:read": "read webhook endpoints and their delivery attempts",
  "webhooks:write": "create, update, delete and test webhook endpoints, rotate secrets, redeliver",
  "custom_fields:read": "read custom field definitions and each resource's custom fields as JSON Schema",
  "custom_fields:write": "create, change and archive custom field definitions",
  "admin:read": "all read scopes",
} as const;

/** A scope an endpoint can require (docs/api-contract.md §5). */
export type Scope = keyof typeof SCOPES;

/** Every write scope plus `admin:read`: a key that can do everything the API offers (demo key, tests). */
export const FULL_ACCESS_SCOPES: readonly string[] = [
  ...Object.keys(SCOPES).filter((scope) => scope.endsWith(":write")),
  "admin:read",
];

/** Deprecated scopes and how key creation treats them (docs/api-contract.md §5.8). */
export const DEPRECATED_SCOPES = {
  "reconciliation:read": { accepted: false, note: "reconciliation scopes are deprecated and can no longer be granted" },
  "reconciliation:write": {
    accepted: false,
    note: "reconciliation scopes are deprecated and can no longer be granted",
  },
  "onboarding:read": { accepted: false, note: "onboarding:read is dead: no endpoint uses it" },
  "contracts:read": {
    accepted: true,
    note: "contracts:read is accepted but grants nothing: no contracts endpoint exists",
  },
} as const;

function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/**
 * Validates the scopes asked for at key creation and returns them de-duplicated in table order
 * (accepted deprecated scopes such as `contracts:read` kept last).
 * @throws ApiError `insufficient_scope` (403) for `reconciliation:*` and `onboarding:read` (docs/api-contract.md §5);
 *         ApiError `validation_error` (422) for an unknown scope or an empty list.
 */
export function validateRequestedScopes(requested: readonly string[]): string[] {
  const wanted = new Set(requested.map((scope) => scope.trim()).filter(Boolean));
  if (wanted.size === 0) {
    throw new ApiError("validation_error", "At least one scope is required", {
      details: [{ path: ["scopes"], message: "At least one scope is required" }],
    });
  }
  const unknown: string[] = [];
  for (const scope of wanted) {
    const deprecated = DEPRECATED_SCOPES[scope as keyof typeof DEPRECATED_SCOPES];
    if (deprecated && !deprecated.accepted)
      throw new ApiError("insufficient_scope", `Scope ${scope} refused: ${deprecated.note}`);
    if (!deprecated && !isScope(scope)) unknown.push(scope);
  }
  if (unknown.length > 0) {
    throw new ApiError("validation_error", `Unknown scope: ${unknown.join(", ")}`, {
      details: unknown.map((scope) => ({ path: ["scopes"], message: `Unknown scope ${scope}` })),
    });
  }
  const ordered: string[] = Object.keys(SCOPES).filter((scope) => wanted.has(scope));
  return [...ordered, ...Object.keys(DEPRECATED_SCOPES).filter((scope) => wanted.has(scope))];
}

/**
 * Whether a key's granted scopes satisfy `required`: exact grant, `x:write` ⇒ `x:read`, `admin:read` ⇒ every `:read`
 * (docs/api-contract.md §5.5). Deprecated scopes grant nothing.
 */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes(required)) return true;
  const [resource, action] = required.split(":");
  if (action !== "read") return false;
  return granted.includes(`${resource}:write`) || granted.includes("admin:read");
}
