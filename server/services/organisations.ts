import { prisma } from "../db/client";
import type { RateLimitPlan } from "../db/generated/client";

/** Rate-limit plans and their default windows in requests per minute (spec §8). */
export const PLAN_LIMITS: Record<RateLimitPlan, { perKey: number; perOrg: number }> = {
  STARTER: { perKey: 30, perOrg: 60 },
  GROWTH: { perKey: 60, perOrg: 120 },
  SCALE: { perKey: 120, perOrg: 240 },
  PRO: { perKey: 120, perOrg: 240 },
};

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
 */
export async function ensureOrganisation(
  slug: string,
  options: { name?: string; plan?: RateLimitPlan; limits?: { perKey: number; perOrg: number } } = {},
): Promise<OrganisationRecord> {
  const settings = {
    ...(options.plan ? { plan: options.plan } : {}),
    ...(options.limits ? { rateLimitPerKey: options.limits.perKey, rateLimitPerOrg: options.limits.perOrg } : {}),
  };
  return prisma().organisation.upsert({
    where: { slug },
    create: { slug, name: options.name ?? slug, ...settings },
    update: settings,
    select: { id: true, slug: true, name: true, plan: true, rateLimitPerKey: true, rateLimitPerOrg: true },
  });
}
