// The Node.js versions this project supports, and how the README's commands get one on a machine whose Node is older:
// Node 20 left maintenance in 2026; 22 and 24 are the LTS lines. `package.json` `engines` says the same
// and a test keeps the two in step.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The supported range, as in `package.json` `engines.node`. */
export const SUPPORTED_NODE = "^22.15.0 || ^24.0.0";

/** Node major obtained from the npm registry (package `node`) when the running one is not supported. */
const FALLBACK_MAJOR = 24;

/** Whether a Node version string (`22.13.0`, `v24.1.0`) is in {@link SUPPORTED_NODE}. */
export function isSupportedNode(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number);
  return (major === 22 && minor >= 15) || major === 24;
}

/**
 * Makes sure the current command runs on a supported Node. On a supported one it returns at once. Otherwise it says so
 * in one line, installs Node {@link FALLBACK_MAJOR} from the npm registry (the `node` package, a binary in an npm
 * package) under `node_modules/.cache/node<major>/`, runs the same command again on it with that Node first on
 * `PATH` (so the command's own children use it too), forwards SIGINT and SIGTERM to it, and exits with its status:
 * the returned promise then never settles.
 * @param root the project folder (holds `node_modules`).
 */
export async function ensureSupportedNode(root: string): Promise<void> {
  if (isSupportedNode(process.versions.node)) return;
  const prefix = path.join(root, "node_modules", ".cache", `node${FALLBACK_MAJOR}`);
  const bin = path.join(prefix, "node_modules", "node", "bin");
  const node = path.join(bin, "node");
  console.error(
    `Node ${process.versions.node} is not supported (${SUPPORTED_NODE}); running on Node ${FALLBACK_MAJOR} from the npm registry (${path.relative(root, prefix)}).`,
  );
  if (!existsSync(node)) {
    mkdirSync(prefix, { recursive: true });
    // The `node` package installs its binary in a preinstall script; allow exactly that one.
    writeFileSync(path.join(prefix, "package.json"), JSON.stringify({ private: true, allowScripts: { node: true } }));
    const install = spawnSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", `node@${FALLBACK_MAJOR}`], {
      cwd: prefix,
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (install.status !== 0 || !existsSync(node)) {
      console.error(`Could not obtain Node ${FALLBACK_MAJOR}: install Node 22 or 24 (https://nodejs.org) and retry.`);
      process.exit(1);
    }
  }
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  await new Promise<never>(() => {
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  });
}
