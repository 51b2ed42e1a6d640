import { z } from "zod";

// An empty variable counts as unset, as shells and .env files often leave them.
const optionalUrl = z.preprocess(
  (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
  z.url().optional(),
);

/**
 * Process configuration, validated once at start-up (DESIGN.md §8).
 *
 * - `DATABASE_URL`: PostgreSQL URL; unset means the embedded PGlite database under `DATA_DIR`.
 * - `REDIS_URL`: TCP Redis URL for the key-value store; `KV_REST_API_URL` + `KV_REST_API_TOKEN`: Vercel KV / Upstash REST.
 *   Neither set means the in-memory store (one process).
 * - `PORT`: HTTP port, default 3000. `PUBLIC_BASE_URL`: origin used in `docsUrl` links and the OpenAPI `servers`;
 *   default: the origin of each request.
 * - `DATA_DIR`: directory of the embedded database, default `.data`.
 */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: optionalUrl,
  REDIS_URL: optionalUrl,
  KV_REST_API_URL: optionalUrl,
  KV_REST_API_TOKEN: z.string().optional(),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  PUBLIC_BASE_URL: optionalUrl,
  DATA_DIR: z.string().min(1).default(".data"),
});

/** The validated environment; see {@link EnvSchema}. */
export type Env = z.infer<typeof EnvSchema>;

let cached: Env | undefined;

/**
 * Parses `process.env` with {@link EnvSchema} (cached after the first call).
 * @throws Error naming every missing or malformed variable; start-up scripts print it and exit 1.
 */
export function env(): Env {
  if (cached) return cached;
  const parsed = EnvSchema.safeParse(process.env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid environment:\n  ${problems.join("\n  ")}`);
  }
  cached = parsed.data;
  return cached;
}

/** Forgets the cached environment so tests can change `process.env` between cases. */
export function resetEnvCache(): void {
  cached = undefined;
}
