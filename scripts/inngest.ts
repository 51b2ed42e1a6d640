// `npm run inngest`: the Inngest dev server for local webhook delivery (README, "Running it"), registering this app's
// functions at http://localhost:$PORT/api/inngest. It comes from the npm package `inngest-cli` through npx, whose
// install script downloads the real binary from cli.inngest.com (falling back to github.com); where that download or
// the package itself cannot be fetched, npx exits 1 printing nothing. So the package is first installed and asked its
// version, its output kept: on failure this prints one line saying why and what to do instead, and exits 1.
// Otherwise the dev server runs in the foreground, Ctrl-C stops it.
import { spawn, spawnSync } from "node:child_process";
import path from "node:path";

/** The dev server's version: the same as the self-hosted server's image in compose.yaml. */
export const INNGEST_CLI = "inngest-cli@1.45.1";

const NPX = process.platform === "win32" ? "npx.cmd" : "npx";

/**
 * The one line to print when `npx inngest-cli` could not be installed or run, from what it printed (`output`): why
 * (the binary download's error, or npm's) and what to do instead.
 */
export function installFailure(output: string): string {
  const download =
    /request to \S+ failed, reason: ([^\n]+)/.exec(output)?.[1] ??
    /Error downloading binary; ([^\n]+)/.exec(output)?.[1];
  const npmError = /npm error (?:code )?([^\n]+)/.exec(output)?.[1];
  const reason = download
    ? `its install script could not download the binary from cli.inngest.com or github.com (${download.trim()})`
    : npmError
      ? `npm could not install it (${npmError.trim()})`
      : "its install script could not download the binary from cli.inngest.com or github.com";
  const version = INNGEST_CLI.split("@")[1];
  return (
    `npm run inngest: the Inngest dev server (${INNGEST_CLI}) did not start: ${reason}. ` +
    "Run it again where those hosts are reachable, or run its image: " +
    `docker run --rm --add-host=host.docker.internal:host-gateway -p 8288:8288 inngest/inngest:v${version} inngest dev -u http://host.docker.internal:${port()}/api/inngest ` +
    `(or put the binary from https://github.com/inngest/inngest/releases/tag/v${version} on PATH and run inngest dev -u http://localhost:${port()}/api/inngest).`
  );
}

function port(): string {
  return process.env.PORT?.trim() || "3000";
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  // --foreground-scripts: the install script's error reaches the captured output instead of being dropped by npm.
  const probe = spawnSync(NPX, ["--yes", "--foreground-scripts", INNGEST_CLI, "version"], { encoding: "utf8" });
  if (probe.status !== 0) {
    console.error(installFailure(`${probe.stdout ?? ""}\n${probe.stderr ?? ""}\n${probe.error?.message ?? ""}`));
    process.exit(1);
  }
  const child = spawn(NPX, ["--yes", INNGEST_CLI, "dev", "-u", `http://localhost:${port()}/api/inngest`], {
    stdio: "inherit",
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
