// The operator command run in the test process, on the test database: scripts/admin.ts's `runAdmin`, as
// `npm run admin -- <args>` runs it, minus the process around it (test/integration/platform/admin.test.ts spawns that once).
import { runAdmin } from "../../scripts/admin";

/** What the command printed. */
export interface AdminRun {
  stdout: string;
  stderr: string;
}

/**
 * Runs `npm run admin -- <args>` in this process. Resolves with what it printed when its exit status is 0; rejects
 * otherwise with an Error carrying `code` (the exit status), `stdout` and `stderr`, as `execFile` would.
 */
export async function admin(...args: string[]): Promise<AdminRun> {
  let stdout = "";
  let stderr = "";
  const code = await runAdmin(args, {
    out: (text) => {
      stdout += `${text}\n`;
    },
    err: (text) => {
      stderr += `${text}\n`;
    },
  });
  if (code === 0) return { stdout, stderr };
  throw Object.assign(new Error(`npm run admin -- ${args.join(" ")} exited ${code}:\n${stderr}`), {
    code,
    stdout,
    stderr,
  });
}
