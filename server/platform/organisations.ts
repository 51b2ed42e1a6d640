import type { RateLimitPlan } from "../db/generated/client";
import { prisma } from "../db/transaction";
import { ApiError } from "../errors";
import { forgetCachedKeys } from "./api-keys/key-cache";

/** Rate-limit plans and their default windows in requests per minute (docs/api-contract.md §8). */
export const PLAN_LIMITS: Record<RateLimitPlan, { perKey: number; perOrg: number }> = {
  STARTER: { perKey: 30, perOrg: 60 },
  GROWTH: { perKey: 60, perOrg: 120 },
  SCALE: { perKey: 120, perOrg: 240 },
  PRO: { perKey: 120, perOrg: 240 },
};

/**
 * The range Pro / Enterprise limits are configurable in, requests per minute (docs/api-contract.md §8): 120–300 per
 * key, 240–600 per organisation. Other plans' overrides are the operator's explicit choice and are not bounded.
 */
export const PRO_LIMIT_RANGE = { perKey: { min: 120, max: 300 }, perOrg: { min: 240, max: 600 } } as const;

/**
 * Problems of `limits` against {@link PRO_LIMIT_RANGE}, as docs/api-contract.md §2.1 details (empty when within range).
 */
export function proLimitProblems(limits: { perKey: number; perOrg: number }): { path: string[]; message: string }[] {
  return (["perKey", "perOrg"] as const).flatMap((field) => {
    const { min, max } = PRO_LIMIT_RANGE[field];
    const value = limits[field];
    return Number.isInteger(value) && value >= min && value <= max
      ? []
      : [{ path: ["limits", field], message: `Pro plan ${field} must be ${min} to ${max} requests per minute` }];
  });
}

/** An organisation with its plan and the operator's limit overrides (requests per minute, null = plan default). */
export interface OrganisationRecord {
  id: string;
  slug: string;
  name: string;
  plan: RateLimitPlan;
  rateLimitPerKey: number | null;
  rateLimitPerOrg: number | null;
}

/**
 * Returns the organisation with `slug`, creating it when missing; applies the plan and limit overrides when given.
 * Used by the operator command and the demo seed.
 * @throws ApiError `validation_error` (422) when the organisation ends up on the PRO plan with limits outside
 *   {@link PRO_LIMIT_RANGE} (the given ones, else its current overrides); nothing is written then.
 */
export async function ensureOrganisation(
  slug: string,
  options: { name?: string; plan?: RateLimitPlan; limits?: { perKey: number; perOrg: number } } = {},
): Promise<OrganisationRecord> {
  const settings = {
    ...(options.plan ? { plan: options.plan } : {}),
    ...(options.limits ? { rateLimitPerKey: options.limits.perKey, rateLimitPerOrg: options.limits.perOrg } : {}),
  };
  if (options.plan === "PRO" || (options.limits && !options.plan)) {
    const current = await prisma().organisation.findUnique({
      where: { slug },
      select: { plan: true, rateLimitPerKey: true, rateLimitPerOrg: true },
    });
    const plan = options.plan ?? current?.plan;
    const effective = options.limits ?? {
      perKey: current?.rateLimitPerKey ?? PLAN_LIMITS.PRO.perKey,
      perOrg: current?.rateLimitPerOrg ?? PLAN_LIMITS.PRO.perOrg,
    };
    const problems = plan === "PRO" ? proLimitProblems(effective) : [];
    if (problems.length > 0) {
      throw new ApiError("validation_error", problems.map((problem) => problem.message).join("; "), {
        details: problems,
      });
    }
  }
  const organisation = await prisma().organisation.upsert({
    where: { slug },
    create: { slug, name: options.name ?? slug, ...settings },
    update: settings,
    select: { id: true, slug: true, name: true, plan: true, rateLimitPerKey: true, rateLimitPerOrg: true },
  });
  // Keys remembered by the instances carry the organisation's limits.
  if (Object.keys(settings).length > 0) await forgetCachedKeys();
  return organisation;
}
