// The MCP endpoint in the benchmark (`npm run bench`, section 1; docs/api-contract.md §10): the `fetch` tool reading the
// account the REST reads read, through `npm start`'s /mcp with the same key in the same alternating slices (target:
// the REST read at most 1.5× as fast), and `tools/list`: its payload and its latency.
import { Agent } from "node:http";
import { median, quantile, send } from "./load";

/** The REST read may be at most this many times as fast as the same read through the `fetch` tool. */
export const MCP_READ_TARGET = 1.5;

const REVISION = "2026-07-28";

/** One stateless 2026-07-28 request to `/mcp`: the headers and the body the official client sends for `method`. */
function mcpRequest(key: string, method: string, params: Record<string, unknown>, name?: string) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientInfo": { name: "crm-bench", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  return {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
  };
}

/** The `tools/call` of `fetch` for one account: what an agent sends to read a record it knows. */
export function mcpFetchRequest(key: string, accountId: string) {
  return mcpRequest(key, "tools/call", { name: "fetch", arguments: { id: accountId, type: "account" } }, "fetch");
}

/** `tools/list` with a full-access key: its payload, bytes, and its latency over sequential requests, ms. */
export interface ToolsListResult {
  bytes: number;
  tools: number;
  p50: number;
  p99: number;
}

/**
 * Sends `tools/list` `runs` times one after another (after `warmup` unmeasured ones) and reports the answer's size
 * and latency.
 * @throws Error when the answer is not a list of tools.
 */
export async function measureToolsList(
  origin: string,
  key: string,
  runs: number,
  warmup: number,
): Promise<ToolsListResult> {
  const agent = new Agent({ keepAlive: true });
  const request = mcpRequest(key, "tools/list", {});
  const latencies: number[] = [];
  let body = "";
  try {
    for (let index = 0; index < warmup + runs; index++) {
      const response = await send(agent, `${origin}/mcp`, request);
      if (response.status !== 200)
        throw new Error(`tools/list answered ${response.status}: ${response.body.slice(0, 300)}`);
      if (index >= warmup) latencies.push(response.ms);
      body = response.body;
    }
  } finally {
    agent.destroy();
  }
  const tools = (JSON.parse(body) as { result?: { tools?: unknown[] } }).result?.tools;
  if (!Array.isArray(tools)) throw new Error(`tools/list answered no tools: ${body.slice(0, 300)}`);
  return {
    bytes: Buffer.byteLength(body),
    tools: tools.length,
    p50: median(latencies),
    p99: quantile(latencies, 0.99),
  };
}
