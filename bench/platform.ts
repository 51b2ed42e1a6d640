// Section 4 of `npm run bench`: what the platform layers cost. The REST facade runs on node:http in three
// configurations at once — every layer on, audit off, rate limiting and audit off (BENCH_DISABLE_LAYERS) — and GET and
// POST throughput are measured in alternating slices; POST is also measured with a fresh Idempotency-Key per request.
// On node:http the layers are a larger share of each request than behind Next.js, so the costs shown are upper bounds.
import { randomBytes } from "node:crypto";
import { type LoadResult, type LoadSample, runLoad, summariseLoad } from "./load";

/** The three facade servers: `all` layers on, `noAudit` (rate limiting only), `off` (neither). */
export type LayerConfig = "all" | "noAudit" | "off";

/** BENCH_DISABLE_LAYERS of each configuration. */
export const LAYER_ENV: Record<LayerConfig, string> = { all: "", noAudit: "audit", off: "rate-limit,audit" };

/** Requests/s of each case and the derived costs (share of throughput lost, 0–1). */
export interface PlatformResult {
  get: Record<LayerConfig, LoadResult>;
  post: Record<LayerConfig, LoadResult>;
  postIdempotent: LoadResult;
  costs: {
    getRateLimit: number;
    getAudit: number;
    getTogether: number;
    postRateLimit: number;
    postAudit: number;
    postTogether: number;
    postIdempotency: number;
  };
}

type Case = { name: string; config: LayerConfig; method: "GET" | "POST"; idempotent: boolean };

/**
 * Measures GET /accounts/{id} and POST /accounts on the three configurations, `slices` rounds of `durationMs`
 * split evenly, after `warmupMs` per case.
 */
export async function measurePlatformLayers(options: {
  origins: Record<LayerConfig, string>;
  key: string;
  accountId: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
  slices: number;
}): Promise<PlatformResult> {
  const cases: Case[] = [
    ...(["all", "noAudit", "off"] as const).flatMap((config) => [
      { name: `GET ${config}`, config, method: "GET" as const, idempotent: false },
      { name: `POST ${config}`, config, method: "POST" as const, idempotent: false },
    ]),
    { name: "POST all + Idempotency-Key", config: "all", method: "POST", idempotent: true },
  ];
  const authorization = `Bearer ${options.key}`;
  const load = (entry: Case, durationMs: number) => {
    const origin = options.origins[entry.config];
    if (entry.method === "GET") {
      return runLoad({
        url: `${origin}/api/v1/accounts/${options.accountId}`,
        headers: { authorization },
        connections: options.connections,
        durationMs,
      });
    }
    return runLoad({
      url: `${origin}/api/v1/accounts`,
      request: () => ({
        method: "POST",
        headers: {
          authorization,
          "content-type": "application/json",
          ...(entry.idempotent ? { "idempotency-key": randomBytes(12).toString("hex") } : {}),
        },
        body: JSON.stringify({ name: "Bench account", industry: "Legal", employeeCount: 25 }),
      }),
      connections: options.connections,
      durationMs,
    });
  };

  for (const entry of cases) await load(entry, options.warmupMs);
  const samples = new Map<Case, LoadSample[]>(cases.map((entry) => [entry, []]));
  for (let slice = 0; slice < options.slices; slice++) {
    for (let i = 0; i < cases.length; i++) {
      const entry = cases[(slice + i) % cases.length] as Case;
      samples.get(entry)?.push(await load(entry, options.durationMs / options.slices));
    }
  }
  const result = (name: string) => {
    const entry = cases.find((c) => c.name === name) as Case;
    return summariseLoad(samples.get(entry) ?? []);
  };
  const get = { all: result("GET all"), noAudit: result("GET noAudit"), off: result("GET off") };
  const post = { all: result("POST all"), noAudit: result("POST noAudit"), off: result("POST off") };
  const postIdempotent = result("POST all + Idempotency-Key");
  const cost = (withLayer: LoadResult, without: LoadResult) => 1 - withLayer.rps / without.rps;
  return {
    get,
    post,
    postIdempotent,
    costs: {
      getRateLimit: cost(get.noAudit, get.off),
      getAudit: cost(get.all, get.noAudit),
      getTogether: cost(get.all, get.off),
      postRateLimit: cost(post.noAudit, post.off),
      postAudit: cost(post.all, post.noAudit),
      postTogether: cost(post.all, post.off),
      postIdempotency: cost(postIdempotent, post.all),
    },
  };
}
