import { describe, expect, it } from "vitest";
import { hasScope, validateRequestedScopes } from "./scopes";

describe("scope implications (docs/api-contract.md §5.5)", () => {
  it("write implies the matching read, admin:read implies every read and no write", () => {
    expect(hasScope(["accounts:write"], "accounts:read")).toBe(true);
    expect(hasScope(["accounts:write"], "contacts:read")).toBe(false);
    expect(hasScope(["accounts:read"], "accounts:write")).toBe(false);
    expect(hasScope(["admin:read"], "mrr:read")).toBe(true);
    expect(hasScope(["admin:read"], "deals:write")).toBe(false);
    expect(hasScope(["contracts:read"], "accounts:read")).toBe(false);
  });
});

describe("scopes requested at key creation (docs/api-contract.md §5.8)", () => {
  it("orders and de-duplicates, keeping contracts:read last", () => {
    expect(validateRequestedScopes(["contracts:read", "deals:write", "accounts:read", "deals:write"])).toEqual([
      "accounts:read",
      "deals:write",
      "contracts:read",
    ]);
  });

  it("refuses reconciliation and onboarding scopes with 403 and unknown scopes with 422", () => {
    for (const scope of ["reconciliation:read", "reconciliation:write", "onboarding:read"]) {
      expect(() => validateRequestedScopes([scope])).toThrow(
        expect.objectContaining({ code: "insufficient_scope", status: 403 }),
      );
    }
    expect(() => validateRequestedScopes(["accounts:admin"])).toThrow(
      expect.objectContaining({ code: "validation_error", status: 422 }),
    );
    expect(() => validateRequestedScopes([" ", ""])).toThrow(expect.objectContaining({ code: "validation_error" }));
  });
});
