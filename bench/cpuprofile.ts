// Reads V8 .cpuprofile files (written by `node --cpu-prof`) into a short "where does the time go" list, so a
// `--profile` bench run points at the hot spots without opening DevTools.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** One line of a profile summary: a function and its share of the sampled CPU time (self time, 0–1). */
export interface HotSpot {
  share: number;
  name: string;
  location: string;
}

/** The largest `.cpuprofile` in `dir` (a server's, rather than its npx launcher's); undefined when there is none. */
export function largestProfile(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => path.join(dir, name));
  return files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

/**
 * The `top` functions by self time in a V8 CPU profile, idle and GC ticks included as V8 names them
 * (`(idle)`, `(garbage collector)`, `(program)`). Locations are shortened to `package/file:line` or `repo/file:line`.
 */
export function hotSpots(file: string, root: string, top = 12): HotSpot[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[] };
  const byFunction = new Map<string, HotSpot & { hits: number }>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const location = url ? `${shorten(url, root)}:${lineNumber + 1}` : "";
    const key = `${functionName}@${location}`;
    const entry = byFunction.get(key) ?? { share: 0, hits: 0, name: functionName || "(anonymous)", location };
    entry.hits += hits;
    byFunction.set(key, entry);
  }
  return [...byFunction.values()]
    .sort((a, b) => b.hits - a.hits)
    .slice(0, top)
    .map(({ hits, name, location }) => ({ share: total ? hits / total : 0, name, location }));
}

function shorten(url: string, root: string): string {
  const plain = url.replace(/^file:\/\//, "");
  const inModules = plain.lastIndexOf("/node_modules/");
  if (inModules >= 0) return plain.slice(inModules + "/node_modules/".length);
  return plain.startsWith(root) ? plain.slice(root.length).replace(/^\//, "") : plain;
}
