import { z } from "zod";

// An empty variable counts as unset, as shells and .env files often leave them.
const optionalUrl = z.preprocess(
  (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
  z.url().optional(),
);

// A comma-separated list, its items trimmed, empty ones dropped; unset is none.
const commaList = z
  .string()
  .default("")
  .transform((value) =>
    value
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  );

/**
 * Process configuration, validated once at start-up (docs/architecture.md, "Running in production").
 *
 * - `DATABASE_URL`: PostgreSQL URL; unset means the embedded PGlite database under `DATA_DIR`.
 * - `REDIS_URL`: TCP Redis URL for the key-value store; `KV_REST_API_URL` + `KV_REST_API_TOKEN`: Vercel KV / Upstash REST.
 *   Neither set means the in-memory store (one process).
 * - `PORT`: HTTP port, default 3000. `PUBLIC_URL`: the public origin (e.g. `https://crm.example.com`) used in
 *   `docsUrl` links, the OpenAPI `servers`, the Postman `baseUrl` and the start-up banner, and by the settings'
 *   sign-in: their cookies are `Secure` exactly when it is https, it is the only trusted origin and its host name is
 *   the passkey relying party; default: the origin each request was sent to (`Host`, or `X-Forwarded-Host`/`-Proto`
 *   from a trusted proxy). Required by a production start unless everything is local ({@link productionRefusal}).
 * - `TRUST_PROXY`: which proxy headers to believe for the client address (rate limits, audit log) and the public
 *   origin: `false` (default: the socket's address; forwarding headers are ignored), a number of proxy
 *   hops in front of the server (`1`: the last `X-Forwarded-For` entry is the client), or `vercel` (Vercel's
 *   `X-Vercel-Forwarded-For` / `X-Forwarded-Host`).
 * - `DATA_DIR`: directory of the embedded database, default `.data`.
 * - `RATE_LIMIT_ANONYMOUS_PER_MIN`: sliding window per client IP for requests without a valid key (401s, documents,
 *   unknown paths), requests per minute; default 120.
 * - `RATE_LIMIT_PAGES_PER_MIN`: requests a minute one visitor (a settings session, else a client address) may send to
 *   the pages, `/api/trpc` and `/api/auth` under `npm start`; default 300 (docs/architecture.md, "Budgets: what one
 *   request may cost").
 * - `RATE_LIMIT_WINDOW_MS`: length of every rate-limit window, ms, 1,000–60,000; default 60,000, the minute every
 *   limit is counted in (docs/api-contract.md §8). Tests set a shorter one so a full window passes in seconds; the
 *   limits then count per that window.
 * - `KV_TIMEOUT_MS`: bound on each key-value store command (TCP Redis, default 250) or HTTPS request (Vercel KV,
 *   default 1000), ms. Past it the limiter counts in this process until the store answers again (docs/architecture.md, "Key-value store and rate limits").
 * - `WEBHOOKS_ALLOW_LOOPBACK`: `true` lets webhook deliveries reach loopback addresses (127.0.0.0/8, ::1). A
 *   development and test setting; every other private range stays refused (docs/architecture.md,
 *   "Webhooks and the outbox"). Default false.
 * - `LOG_LEVEL`: the least severe level written to the log (`trace`, `debug`, `info`, `warn`, `error`, `fatal`,
 *   `silent`); default `info`, which logs one line per request (docs/architecture.md, "Observability").
 * - `METRICS_PORT`: when set, metrics are served as Prometheus text at `/metrics` on this port, on every interface,
 *   never on `PORT`. `METRICS_TOKEN`: when set, `/metrics` needs `Authorization: Bearer <token>` (else 401); at least
 *   16 characters. The standard `OTEL_*` variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, …) are read by the OpenTelemetry
 *   SDK itself (docs/architecture.md, "Observability").
 * - `BETTER_AUTH_SECRET`: signs settings session cookies and encrypts two-factor secrets, at least 32 characters;
 *   required in production with `DATABASE_URL`, else generated once into `DATA_DIR` (server/identity/secret.ts).
 * - `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://…`) and `MAIL_FROM` (`CRM <crm@example.com>`): with both set,
 *   invitations and password-reset links are also mailed (nodemailer); without, they are only shown and printed.
 * - `KV_PREFIX`: prepended to every key this service writes in Redis or Vercel KV (rate-limit windows, the key-cache
 *   generation, sign-in throttles), so deployments sharing one store never share entries; default `crm:`. Letters,
 *   digits and `:_.-` only: a brace would break the hash tags that keep a request's windows on one cluster node
 *   (docs/architecture.md, "Key-value store and rate limits").
 * - `SEED_DEMO`: `false` leaves an empty database empty; default `true`: the first start seeds the demo organisation
 *   and prints its key and login (the README's first command). Production deployments set `false`.
 * - `DB_STATEMENT_TIMEOUT_MS`: the longest one statement of a request (an API call, a settings page) may run on
 *   PostgreSQL before the database cancels it, ms, 100–600,000; default 5,000. Background jobs run under 60 s,
 *   maintenance (migrations, the demo seed, the admin command) under none (docs/architecture.md, "Budgets: what one
 *   request may cost"). The embedded database cannot time a statement out.
 * - `SHUTDOWN_DELAY_MS`: after SIGTERM, how long `npm start` keeps serving with `/readyz` answering 503 before it stops
 *   accepting connections, so a load balancer stops sending first (docs/architecture.md, "Running in production");
 *   ms, default 0.
 * - `SSO_TRUSTED_IDP_ORIGINS`: comma-separated origins (`https://idp.corp.internal`) of identity providers on private
 *   or loopback addresses that organisations may configure for single sign-on; every other issuer must be publicly
 *   routable (docs/api-contract.md §11.1). Default none.
 * - `SSO_DNS_SERVERS`: comma-separated DNS servers (`10.0.0.2`, `127.0.0.1:5353`) that verify single sign-on domains'
 *   TXT records; default the system's resolvers (docs/api-contract.md §11.2).
 */
export const EnvSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    DATABASE_URL: optionalUrl,
    REDIS_URL: optionalUrl,
    KV_REST_API_URL: optionalUrl,
    KV_REST_API_TOKEN: z.string().optional(),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    PUBLIC_URL: optionalUrl,
    TRUST_PROXY: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^(false|true|vercel|\d{1,2})$/, "must be false, a number of proxy hops (0–99) or vercel")
      .default("false")
      .transform((value): TrustProxy => {
        if (value === "vercel") return "vercel";
        if (value === "true") return 1;
        return value === "false" ? 0 : Number(value);
      }),
    DATA_DIR: z.string().min(1).default(".data"),
    /**
     * Days the events feed keeps events (docs/api-contract.md §6.8); an older cursor is answered 410 cursor_expired.
     */
    EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
    RATE_LIMIT_ANONYMOUS_PER_MIN: z.coerce.number().int().min(1).default(120),
    RATE_LIMIT_PAGES_PER_MIN: z.coerce.number().int().min(1).default(300),
    RATE_LIMIT_WINDOW_MS: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z.coerce.number().int().min(1_000).max(60_000).default(60_000),
    ),
    KV_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).optional(),
    BETTER_AUTH_SECRET: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z.string().min(32, "must be at least 32 characters").optional(),
    ),
    SMTP_URL: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z
        .url()
        .refine((value) => /^smtps?:/.test(value), "must be an smtp:// or smtps:// URL")
        .optional(),
    ),
    MAIL_FROM: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z.string().max(320).optional(),
    ),
    WEBHOOKS_ALLOW_LOOPBACK: z
      .enum(["true", "false", "1", "0"])
      .default("false")
      .transform((value) => value === "true" || value === "1"),
    KV_PREFIX: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z
        .string()
        .max(64)
        .regex(/^[A-Za-z0-9:_.-]+$/, "letters, digits, colon, underscore, dot and hyphen only")
        .default("crm:"),
    ),
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(120_000).default(0),
    DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
    SEED_DEMO: z
      .enum(["true", "false", "1", "0"])
      .default("true")
      .transform((value) => value === "true" || value === "1"),
    LOG_LEVEL: z.preprocess(
      (value) => (typeof value === "string" ? value.trim().toLowerCase() || undefined : value),
      z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
    ),
    SSO_TRUSTED_IDP_ORIGINS: commaList.pipe(z.array(z.url().transform((origin) => new URL(origin).origin))),
    SSO_DNS_SERVERS: commaList,
    METRICS_PORT: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z.coerce.number().int().min(1).max(65535).optional(),
    ),
    METRICS_TOKEN: z.preprocess(
      (value) => (typeof value === "string" && value.trim() === "" ? undefined : value),
      z.string().min(16, "must be at least 16 characters (e.g. openssl rand -hex 32)").optional(),
    ),
  })
  .refine((config) => config.METRICS_PORT === undefined || config.METRICS_PORT !== config.PORT, {
    path: ["METRICS_PORT"],
    message: "must differ from PORT: metrics are never served on the public port",
  });

/** `TRUST_PROXY` parsed: 0 trusts no proxy, n trusts n hops of `X-Forwarded-*`, `vercel` trusts Vercel's headers. */
export type TrustProxy = number | "vercel";

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

/**
 * The value `.env.example` gives every secret (`POSTGRES_PASSWORD`, `BETTER_AUTH_SECRET`, the Inngest keys, …): known
 * to anyone who read the repository, so a production start refuses it ({@link productionRefusal}).
 */
export const ENV_EXAMPLE_PLACEHOLDER = "replace-with-openssl-rand-hex-32";

/**
 * What every value `.env.example` means to be replaced starts with: the secrets' {@link ENV_EXAMPLE_PLACEHOLDER} and
 * `PUBLIC_URL`'s `https://replace-with-your-domain.example`.
 */
export const ENV_EXAMPLE_MARKER = "replace-with-";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Whether a URL's host is this machine's loopback (`localhost`, `127.0.0.0/8`, `::1`). */
function loopback(url: string): boolean {
  const host = new URL(url).hostname.toLowerCase();
  return LOOPBACK_HOSTS.has(host) || host.endsWith(".localhost") || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * What a production start (`NODE_ENV=production`, as `npm start` and the image set) refuses, as the one line it prints
 * before exiting 1, or null when there is nothing (docs/architecture.md, "Running in production"):
 * - a variable holding a value of `.env.example` meant to be replaced ({@link ENV_EXAMPLE_MARKER}: a secret left at
 *   {@link ENV_EXAMPLE_PLACEHOLDER}, also inside a URL, or its example `PUBLIC_URL`);
 * - no `PUBLIC_URL` where the service is not local, i.e. when its database is on another host (`DATABASE_URL` not on
 *   loopback) or a proxy is trusted (`TRUST_PROXY`): then browsers reach it by a name only `PUBLIC_URL` can tell it,
 *   and without it the settings' cookies lose `Secure` behind a TLS proxy, and the trusted origin and the passkey
 *   relying party are whatever `Host` a request carried. The embedded database, or a database on loopback with no
 *   proxy trusted (the README's first command, a developer's machine), needs none.
 * Outside production it returns null.
 * @param config the validated environment ({@link env}).
 * @param variables the raw environment to look for placeholders in; default `process.env`.
 */
export function productionRefusal(config: Env, variables: NodeJS.ProcessEnv = process.env): string | null {
  if (config.NODE_ENV !== "production") return null;
  const placeholders = Object.entries(variables)
    .filter(([, value]) => value?.includes(ENV_EXAMPLE_MARKER))
    .map(([name]) => name)
    .sort();
  if (placeholders.length > 0) {
    return `${placeholders.join(", ")} still ${placeholders.length === 1 ? "holds" : "hold"} .env.example's placeholder (${ENV_EXAMPLE_MARKER}…), which anyone can read: give each its own value (a secret: openssl rand -hex 32; PUBLIC_URL: the origin browsers use) and start again.`;
  }
  const local = (!config.DATABASE_URL || loopback(config.DATABASE_URL)) && config.TRUST_PROXY === 0;
  if (!config.PUBLIC_URL && !local) {
    return `PUBLIC_URL is required in production when the database is on another host or TRUST_PROXY is set: set it to the origin browsers use, e.g. https://crm.example.com (the settings' Secure cookies, trusted origin and passkeys follow it).`;
  }
  return null;
}

/** Forgets the cached environment so tests can change `process.env` between cases. */
export function resetEnvCache(): void {
  cached = undefined;
}
