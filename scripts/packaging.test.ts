// What a fresh machine needs from package.json and the lock file: `npm ci` on Linux and macOS, x64 and
// arm64, and an `engines` range true to every dependency, so that no supported Node prints an engine warning.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { isSupportedNode, SUPPORTED_NODE } from "./node-runtime";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
interface LockEntry {
  version?: string;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  engines?: { node?: string } | string[];
  optionalDependencies?: Record<string, string>;
}
const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};

/** Where Node would resolve `name` from the package at `from` (a lock key), walking up the node_modules folders. */
function resolveInLock(from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ""}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf("/node_modules/");
    base = cut < 0 ? "" : base.slice(0, cut);
  }
}

describe("the README's commands on an older Node", () => {
  it("npm run build, npm test and npm start check the Node version before any work, to run on Node 24 instead", () => {
    expect(pkg.scripts.build).toBe("tsx scripts/build.ts");
    expect(pkg.scripts.test).toBe("tsx scripts/test.ts");
    expect(pkg.scripts.start).toMatch(/^node (--\S+ )*dist\/serve\.js$/);
    // Each entry point's first piece of work, which must come after the check (scripts/node-runtime.ts).
    const firstWork = {
      "scripts/build.ts": 'step("prisma/build/index.js"',
      "scripts/test.ts": "const tiers = selectedTiers();",
      "scripts/serve.ts": 'await import("../server/env")',
    };
    for (const [file, work] of Object.entries(firstWork)) {
      const source = readFileSync(path.join(root, file), "utf8");
      const check = source.indexOf("await ensureSupportedNode(root);");
      expect(check, file).toBeGreaterThan(0);
      expect(source.indexOf(work, check), `${file}: ${work} after the check`).toBeGreaterThan(check);
      expect(source.slice(0, check), `${file}: nothing before the check`).not.toContain(work);
    }
  });
});

describe("npm ci on an older Node", () => {
  it("says in one line which Node is needed, and npm prints no warnings (its engine warnings were ~1,500 lines)", async () => {
    // What npm reads from the project's .npmrc.
    const { stdout: loglevel } = await run("npm", ["config", "get", "loglevel"], { cwd: root });
    expect(loglevel.trim()).toBe("error");
    expect(pkg.scripts.preinstall).toBe("node scripts/install-notice.mjs");
    // npm hands the script `engines.node`; run here it is on a supported Node, so a range this Node is outside of
    // stands for an older Node.
    const notice = (range: string) =>
      run(process.execPath, ["scripts/install-notice.mjs"], {
        cwd: root,
        env: { ...process.env, npm_package_engines_node: range },
      });
    expect(await notice(pkg.engines.node)).toEqual({ stdout: "", stderr: "" });
    const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
    const newer = `^${major + 1}.0.0 || ^${major}.${minor + 1}.0`;
    expect(await notice(newer)).toEqual({
      stdout: "",
      stderr: `Node ${process.versions.node} is not supported (${newer}): npm run build, npm start and npm test will run on Node 24 from the npm registry.\n`,
    });
    // The image's build stage runs npm ci before copying the sources: the script must be there already.
    const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");
    const copied = dockerfile.indexOf("COPY scripts/install-notice.mjs ./scripts/");
    expect(copied).toBeGreaterThan(0);
    expect(copied).toBeLessThan(dockerfile.indexOf("RUN npm ci --no-audit --no-fund"));
  });
});

describe("package.json and package-lock.json", () => {
  it("declares the supported Node range that the start and test commands check", () => {
    expect(pkg.engines.node).toBe(SUPPORTED_NODE);
    for (const version of ["20.19.0", "22.14.0", "22.15.0", "22.23.3", "23.5.0", "24.0.0", "24.21.0", "26.0.0"]) {
      expect(isSupportedNode(version), version).toBe(semver.satisfies(version, SUPPORTED_NODE));
    }
  });

  it("asks for no Node that a locked dependency refuses (no EBADENGINE on a supported Node)", () => {
    const refused = Object.entries(lock.packages).flatMap(([key, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      // Packages for other platforms are never installed on a supported one; their engines do not apply.
      if (!key || !range || (entry.optional && (entry.os || entry.cpu))) return [];
      return semver.subset(SUPPORTED_NODE, range) ? [] : [`${key} needs node ${range}`];
    });
    expect(refused).toEqual([]);
  });

  it("locks every platform's optional packages, so `npm ci` works on Linux and macOS, x64 and arm64", () => {
    const missing = Object.entries(lock.packages).flatMap(([key, entry]) =>
      Object.keys(entry.optionalDependencies ?? {})
        .filter((name) => !resolveInLock(key, name))
        .map((name) => `${key || "(root)"} → ${name}`),
    );
    expect(missing).toEqual([]);
    const locked = Object.keys(lock.packages);
    for (const platform of ["darwin-arm64", "darwin-x64", "linux-arm64-gnu", "linux-x64-gnu"]) {
      expect(locked, platform).toContain(`node_modules/@next/swc-${platform}`);
    }
    for (const platform of ["darwin-arm64", "darwin-x64", "linux-arm64", "linux-x64"]) {
      expect(locked, platform).toContain(`node_modules/@biomejs/cli-${platform}`);
    }
  });
});
