// The types every step of the REST facade's pipeline shares (docs/architecture.md, "Layers and the request pipeline"):
// the request as an adapter hands it in, the reply a step hands back, and the exchange the steps fill in on the way.
import type { ApiKeyPrincipal } from "../platform/api-keys/service";
import type { RateLimitDecision } from "../platform/limits/rate-limits";
import type { RouteEntry } from "./routes";

/**
 * A request as the node:http and fetch adapters hand it to the pipeline: nothing is parsed yet, so the pipeline can
 * answer malformed requests in the envelope.
 */
export interface ApiRequest {
  /** The method as sent, upper case (`GET`, `TRACE`, `PROPFIND`, …). */
  method: string;
  /** The request target as sent, not decoded: path and query, e.g. `/api/v1/accounts?limit=2`. */
  target: string;
  /** One header by lower-case name; repeated headers joined with ", ". */
  header(name: string): string | undefined;
  /**
   * Whether the header (lower-case name) came more than once: node:http keeps only the first `Authorization`, so a
   * repeat is refused rather than read (docs/api-contract.md §5.1).
   */
  repeated(name: string): boolean;
  /**
   * Reads the body, at most `limit` bytes.
   * @returns the bytes, or null when the body is larger than `limit` (the rest is not read).
   */
  readBody(limit: number): Promise<Uint8Array | null>;
  /** The TCP peer's address; null where the platform gives none (serverless route handlers). */
  socketAddress: string | null;
  /** Whether the request arrived over TLS. */
  encrypted: boolean;
  /**
   * Set only by a caller inside this process that authenticated the key and counted the request in its windows
   * itself (the MCP server, docs/architecture.md, "The MCP server"): the principal the operation runs as, and the
   * request id its log lines and idempotency record carry.
   */
  inProcess?: { principal: ApiKeyPrincipal; requestId: string };
}

/** An answer of the pipeline: status, headers and the body text, serialised once; null for no body. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
  /** The error code (docs/api-contract.md §7) of an error reply, for the audit log; never sent. */
  errorCode?: string;
}

/** What the steps learn about one request, filled in as it goes through the pipeline. */
export interface Exchange {
  request: ApiRequest;
  /** `req_<24 hex>` (docs/api-contract.md §2.1). */
  requestId: string;
  /** `performance.now()` when the request arrived, for the audit log's duration (ms). */
  startedAt: number;
  /** Public origin for links (`docsUrl`), see `publicOrigin`. */
  origin: string;
  /** Client address under `TRUST_PROXY`, see `clientAddress`. */
  clientIp: string | null;
  /** The `User-Agent` header, at most 512 characters, as the request log and the audit trail record it. */
  userAgent: string | null;
  /** Method the route is matched with: `HEAD` is served as `GET` without a body. */
  method: string;
  /** Path below `/api/v1`, decoded, without a trailing slash (`/accounts/c1`). */
  path: string;
  /** Query parameters, decoded; each name at most once. */
  query: Map<string, string>;
  route?: RouteEntry;
  /** Values of the route's path parameters (`{ id: "c1" }`). */
  pathParams: Record<string, string>;
  principal?: ApiKeyPrincipal;
  /**
   * Why the request is refused (malformed target, unknown path, wrong method, invalid key), found by a step before the
   * rate limit and answered after it, so every request is counted and every answer carries the rate-limit headers.
   */
  refusal?: unknown;
  /** For OPTIONS on a known path: the methods it supports, answered with 204 and `Allow`. */
  allow?: string[];
  rateLimit?: RateLimitDecision;
  /** The operation's input: query or body, plus the path parameters. */
  input?: Record<string, unknown>;
  /** The body as parsed, for the idempotency fingerprint. */
  body?: unknown;
  /** Reshapes the records of the answer (`fields=`, `expand=`) before it is serialised. */
  reshape?: (records: Record<string, unknown>[]) => Promise<Record<string, unknown>[]>;
}

/**
 * One step of the pipeline: does its part of the exchange and either answers (returns a reply without calling
 * `next`) or hands over to the rest of the pipeline. Steps throw `ApiError` to answer with an error envelope.
 */
export type Step = (exchange: Exchange, next: () => Promise<Reply>) => Promise<Reply>;
