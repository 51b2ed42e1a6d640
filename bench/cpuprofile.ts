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

/** Where a profile's busy time went: the hottest functions and the same time grouped by package. */
export interface ProfileSummary {
  functions: HotSpot[];
  /** Self time per npm package, `node:` (Node internals), `(gc)`, `(native)`, or the repo folder for our own code. */
  packages: Array<{ share: number; name: string }>;
}

/**
 * Summarises a V8 CPU profile by self time, as shares of the time the process was busy (`(idle)` ticks left out, so
 * a server that waited on PostgreSQL or sat out another server's turn is still compared on its own work). Locations
 * are shortened to `package/file:line` or `repo/file:line`.
 */
export function summariseProfile(file: string, root: string, top = 12): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[] };
  const byFunction = new Map<string, HotSpot & { hits: number }>();
  const byPackage = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (hits === 0 || functionName === "(idle)") continue;
    busy += hits;
    const location = url ? `${shorten(url, root)}:${lineNumber + 1}` : "";
    const key = `${functionName}@${location}`;
    const entry = byFunction.get(key) ?? { share: 0, hits: 0, name: functionName || "(anonymous)", location };
    entry.hits += hits;
    byFunction.set(key, entry);
    const pkg = packageOf(functionName, url, root);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
  }
  const share = (hits: number) => (busy ? hits / busy : 0);
  return {
    functions: [...byFunction.values()]
      .sort((a, b) => b.hits - a.hits)
      .slice(0, top)
      .map(({ hits, name, location }) => ({ share: share(hits), name, location })),
    packages: [...byPackage.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => ({ share: share(hits), name })),
  };
}

function packageOf(functionName: string, url: string, root: string): string {
  if (!url) return functionName === "(garbage collector)" ? "(gc)" : "(native)";
  const plain = url.replace(/^file:\/\//, "");
  if (plain.startsWith("node:")) return "node:";
  const inModules = plain.lastIndexOf("/node_modules/");
  if (inModules >= 0) {
    const [first = "", second = ""] = plain.slice(inModules + "/node_modules/".length).split("/");
    return first.startsWith("@") ? `${first}/${second}` : first;
  }
  // Next bundles our code and most dependencies into chunks; the file names cannot tell them apart.
  if (plain.includes("/.next/")) return ".next bundle (app + bundled deps)";
  const relative = plain.startsWith(root) ? plain.slice(root.length).replace(/^\//, "") : plain;
  return relative.split("/")[0] ?? relative;
}

function shorten(url: string, root: string): string {
  const plain = url.replace(/^file:\/\//, "");
  const inModules = plain.lastIndexOf("/node_modules/");
  if (inModules >= 0) return plain.slice(inModules + "/node_modules/".length);
  return plain.startsWith(root) ? plain.slice(root.length).replace(/^\//, "") : plain;
}
