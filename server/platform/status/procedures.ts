import { z } from "zod";
import { STATUS_EXAMPLE } from "../../contract/examples";
import { ApiError } from "../../errors";
import { publicProcedure, router } from "../../trpc";
import { checkStatus } from "./service";

const ComponentSchema = z.object({
  status: z.enum(["up", "down"]).describe("up when the probe answered within 2 s."),
  latencyMs: z.int().min(0).max(3_600_000).describe("Round-trip time of the probe in milliseconds."),
  driver: z
    .enum(["postgres", "pglite", "redis", "vercel-kv", "memory"])
    .describe("Backend: postgres or pglite for the database; redis, vercel-kv or memory for the cache."),
  error: z.string().max(200).optional().describe("Why the component is down."),
});

/** Response data of `GET /status` when everything is up (docs/api-contract.md §4.8). */
export const StatusSchema = z
  .object({
    status: z.literal("ok").describe("Always ok on a 200 answer."),
    version: z.literal("v1").describe("API version of this path."),
    database: ComponentSchema.describe("PostgreSQL (or the embedded PGlite): SELECT 1."),
    cache: ComponentSchema.describe("The rate-limit store: PING on Redis and Vercel KV; memory is always up."),
  })
  .meta({ id: "Status", example: STATUS_EXAMPLE });

/** `GET /status` (no auth, docs/api-contract.md §4.8). */
export const statusRouter = router({
  /**
   * Database and cache connectivity: 200 with {@link StatusSchema} when both answer within 2,000 ms; otherwise
   * 503 with the error envelope, code `internal_error`, and one `details` entry per component that is down.
   */
  get: publicProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/status",
        protect: false,
        tags: ["Status"],
        summary: "Service status",
        description:
          'No authentication. 200 when the database and the cache both answer within 2 s. 503 otherwise, with success=false, error.code internal_error and error.details naming each component that is down, e.g. [{path:["database"], message:"down: …"}]. Rate-limited per client address in a window of its own (RATE_LIMIT_ANONYMOUS_PER_MIN requests a minute, policy "status"), so other requests without a valid key, such as a burst of bad keys, never use it up. Orchestrators should probe /livez and /readyz instead: outside /api/v1, never rate-limited.',
        errorResponses: { 503: "A dependency is down" },
      },
      ownWindow: "status",
    })
    .input(z.void())
    .output(StatusSchema)
    .query(async () => {
      const { database, cache } = await checkStatus();
      const down = Object.entries({ database, cache }).filter(([, component]) => component.status === "down");
      if (down.length > 0) {
        throw new ApiError(
          "internal_error",
          `Service degraded: ${down.map(([name]) => name).join(" and ")} unreachable`,
          {
            status: 503,
            details: down.map(([name, component]) => ({
              path: [name],
              message: `down: ${component.error ?? "unreachable"}`,
            })),
          },
        );
      }
      return { status: "ok" as const, version: "v1" as const, database, cache };
    }),
});
