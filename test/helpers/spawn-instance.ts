// One more API instance in a process of its own (test/helpers/api-instance.ts), for tests about what instances share:
// the key-value store's windows, budgets and counters.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * Starts an instance with `env` added to this process's environment (the same database and Redis unless `env` says
 * otherwise) and resolves with its `/api/v1` URL once it listens; the child is pushed to `children` for the caller to
 * stop (SIGTERM).
 * @throws Error with the child's output when it exits before listening.
 */
export function spawnApiInstance(env: Record<string, string>, children: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "test/helpers/api-instance.ts")], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      const url = /^(http:\/\/\S+)\n/.exec(output)?.[1];
      if (url) resolve(url);
    });
    child.stderr?.on("data", (chunk) => {
      output += chunk;
    });
    child.once("exit", (code) => reject(new Error(`instance exited with ${code}:\n${output}`)));
  });
}
