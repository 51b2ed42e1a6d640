import { createHash, randomUUID } from "node:crypto";
import { createClient } from "@vercel/kv";
import { parseSlidingWindowReply, SLIDING_WINDOW_LUA, slidingWindowArgs } from "./sliding-window";
import type { KeyValueStore } from "./store";

const SCRIPT_SHA = createHash("sha1").update(SLIDING_WINDOW_LUA).digest("hex");

/**
 * The Vercel KV / Upstash REST driver (`KV_REST_API_URL` + `KV_REST_API_TOKEN`): commands are HTTPS requests
 * (`@vercel/kv` over `@upstash/redis`, base64 response encoding, concurrent commands auto-pipelined into one request).
 * Each request is aborted after `timeoutMs` and not retried, so no API request waits on an outage. The sliding
 * window runs as the same Lua script as the TCP driver: EVALSHA, falling back to EVAL when the server answers NOSCRIPT.
 * @param timeoutMs per-request bound in ms.
 */
export function vercelKvStore(url: string, token: string, timeoutMs: number): KeyValueStore {
  const client = createClient({
    url,
    token,
    retry: { retries: 0 },
    // A function: a fresh timeout per request (a shared signal would abort every later request too).
    signal: () => AbortSignal.timeout(timeoutMs),
    automaticDeserialization: false,
    enableTelemetry: false,
  });
  const instance = randomUUID();
  let sequence = 0;

  return {
    driver: "vercel-kv",
    async ping() {
      await client.ping();
    },
    async slidingWindow(windows, windowMs) {
      sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
      const keys = windows.map((window) => window.key);
      const args = slidingWindowArgs(windows, windowMs, `${instance}:${sequence}`);
      const reply = await client.evalsha(SCRIPT_SHA, keys, args).catch((error: unknown) => {
        if (!String(error).includes("NOSCRIPT")) throw error;
        return client.eval(SLIDING_WINDOW_LUA, keys, args);
      });
      return parseSlidingWindowReply(reply, windows);
    },
    async counter(key) {
      return Number((await client.get<string | number>(key)) ?? 0);
    },
    increment: (key) => client.incr(key),
    close: async () => undefined,
  };
}
