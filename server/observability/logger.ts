// The service's log: one JSON object per line on stdout (pino), for people and log collectors alike
// (docs/architecture.md, "Observability"). Requests are logged by ./requests.ts; everything else logs through `log`.
import pino, { type Logger } from "pino";
import { env } from "../env";

/** Credential-named fields pino replaces with `[redacted]` at the top of every line, request lines included. */
const TOP_LEVEL_REDACTED = ["authorization", "cookie", "password", "secret", "key", "apiKey", "token"];

/**
 * Field paths pino replaces with `[redacted]` wherever they appear one or two levels deep. The service never logs
 * headers, bodies or query strings; this is the second line of defence should a caller pass one anyway.
 */
const REDACTED_PATHS: readonly string[] = [
  ...TOP_LEVEL_REDACTED,
  "headers.authorization",
  "headers.cookie",
  "headers['set-cookie']",
  "*.authorization",
  "*.cookie",
  "*.password",
  "*.passwordHash",
  "*.secret",
  "*.previousSecret",
  "*.key",
  "*.apiKey",
  "*.token",
];

// API keys (docs/api-contract.md §5.2), webhook signing secrets and bearer tokens, wherever they occur in free text
// (error messages and stacks can quote a query's arguments).
const SECRET_IN_TEXT = /\b(?:msp_(?:live|test)_[0-9A-Za-z]{20,}|whsec_[0-9A-Za-z+/=]{8,})|(?<=\bBearer\s+)[^\s"',]+/gi;

/** `text` with every API key, webhook secret and bearer token in it replaced by `[redacted]`. */
function scrubSecrets(text: string): string {
  return text.replace(SECRET_IN_TEXT, "[redacted]");
}

function serializeError(value: unknown): unknown {
  const plain = pino.stdSerializers.err(value as Error) as unknown as Record<string, unknown>;
  if (!plain || typeof plain !== "object") return typeof value === "string" ? scrubSecrets(value) : value;
  for (const field of ["message", "stack"] as const) {
    if (typeof plain[field] === "string") plain[field] = scrubSecrets(plain[field] as string);
  }
  return plain;
}

/** What the active trace adds to a log line: `trace_id` and `span_id` (set by the telemetry when tracing is on). */
type TraceFields = () => { trace_id: string; span_id: string } | undefined;
const holder = globalThis as unknown as {
  __crmLogger?: Logger;
  __crmRequestLogger?: Logger;
  __crmTraceFields?: TraceFields;
  /** The file descriptor log lines go to: 1 (stdout) unless {@link logToStderr} was called. */
  __crmLogFd?: 1 | 2;
};

/**
 * Lets the telemetry add the active span's ids (`trace_id`, `span_id`, hex) to every line logged inside a traced
 * request; undefined stops it. Source: docs/architecture.md, "Observability".
 */
export function setTraceFields(fields: TraceFields | undefined): void {
  holder.__crmTraceFields = fields;
}

function createLogger(): Logger {
  return pino(
    {
      level: env().LOG_LEVEL,
      // ISO 8601 times and level names, which log collectors and people read without a lookup table.
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
      serializers: { err: serializeError, error: serializeError },
      mixin: () => holder.__crmTraceFields?.() ?? {},
    },
    // Written asynchronously as soon as possible (no buffering threshold), so a burst costs one write, a quiet
    // server's lines appear at once, and the request path never blocks on a slow stdout; flushed on exit. A reader
    // that stops reading costs at most 16 MB of buffered lines, then lines are dropped rather than memory grown.
    pino.destination({ dest: holder.__crmLogFd ?? 1, sync: false, minLength: 0, maxLength: 16 * 1024 * 1024 }),
  );
}

/**
 * The process's logger (pino), shared by every copy of this module (Next.js bundles its own): JSON lines on stdout
 * with `time` (ISO 8601), `level` (`trace`…`fatal`), `pid`, `hostname`, `msg`, the fields given, and `trace_id` /
 * `span_id` inside a traced request. `LOG_LEVEL` (default `info`) sets the threshold. Fields named like credentials
 * ({@link REDACTED_PATHS}) are replaced by `[redacted]`, and API keys, webhook secrets and bearer tokens are removed
 * from error messages and stacks. Log errors as `{ err }`.
 * Source: docs/architecture.md, "Observability".
 */
export function log(): Logger {
  holder.__crmLogger ??= createLogger();
  return holder.__crmLogger;
}

/**
 * Sends this process's log lines (same format, same level) to stderr instead of stdout, for a command whose stdout is
 * its result: the operator command, whose `--json` output a pipe reads. Lines already written stay where they went.
 * Source: docs/architecture.md, "Observability".
 */
export function logToStderr(): void {
  holder.__crmLogFd = 2;
  // Made again at the next line, on the new descriptor.
  holder.__crmLogger = undefined;
  holder.__crmRequestLogger = undefined;
}

/**
 * The logger of the per-request lines (./requests.ts): {@link log}'s, redacting the top-level credential names only.
 * Those lines are built from known fields (ids, the route template, status, duration), never from what a client sent,
 * and matching wildcard paths would more than triple the CPU a line costs (about 8 µs instead of 28 µs measured).
 * Source: docs/architecture.md, "Observability".
 */
export function requestLog(): Logger {
  holder.__crmRequestLogger ??= log().child({}, { redact: { paths: TOP_LEVEL_REDACTED, censor: "[redacted]" } });
  return holder.__crmRequestLogger;
}
