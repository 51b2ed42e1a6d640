// The container image without Docker (it cannot run here): the Dockerfile's runtime stage performed in a temporary
// folder. Its COPY lines are read from the Dockerfile and copied from the build (this checkout after `npm run build`,
// which is what the build stage holds), so a file the image lacks fails here; its `npm ci` installs production
// dependencies only; compose.yaml's `migrate` command migrates a fresh, empty PostgreSQL database; the image's CMD
// serves on it with the real Redis until GET /readyz answers 200; the image's HEALTHCHECK passes; the compiled admin
// command makes a key that works; the deploy guide's backup (pg_dump while serving) and restore (pg_restore with the
// app stopped, then migrate and start) bring back what the backup held and nothing after it. The folder's size is the
// image's payload (written to .ci/tmp/container-payload.json).
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ADMIN_URL, admin } from "../helpers/fresh-database";
import { freePort } from "../helpers/ports";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

/** One instruction of a Dockerfile: its keyword (upper case) and the rest of its logical line. */
interface Instruction {
  keyword: string;
  args: string;
}

/** The stages of a Dockerfile, in order: the name after `AS` and their instructions (FROM included). */
function dockerfileStages(text: string): Array<{ name: string; instructions: Instruction[] }> {
  const logical = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
  const stages: Array<{ name: string; instructions: Instruction[] }> = [];
  for (const line of logical) {
    const [keyword = "", ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    if (instruction.keyword === "FROM") {
      stages.push({ name: /\bAS\s+(\S+)/i.exec(instruction.args)?.[1] ?? String(stages.length), instructions: [] });
    }
    stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

/** The `KEY=VALUE` pairs of a stage's ENV instructions. */
function stageEnv(instructions: readonly Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { keyword, args } of instructions) {
    if (keyword !== "ENV") continue;
    for (const pair of args.split(/\s+/)) {
      const [name, ...value] = pair.split("=");
      if (name) env[name] = value.join("=");
    }
  }
  return env;
}

const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");
const stages = dockerfileStages(dockerfile);
const build = stages.find((stage) => stage.name === "build");
const runtime = stages.at(-1);
const workdir = (instructions: readonly Instruction[] | undefined) =>
  instructions?.findLast((instruction) => instruction.keyword === "WORKDIR")?.args ?? "/";
const payload = mkdtempSync(path.join(tmpdir(), "crm-image-"));
const databaseName = `crm_image_${Date.now()}_${randomBytes(3).toString("hex")}`;
const databaseUrl = (() => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${databaseName}`;
  return url.toString();
})();
let server: ChildProcess | undefined;
let serverOutput = "";
let origin = "";
let runtimeEnv: NodeJS.ProcessEnv = { ...process.env };

/** The image's exec-form command (`CMD ["node", …]`) as an argument list for this machine: `node` is this Node. */
function execForm(json: string): string[] {
  const [command, ...args] = JSON.parse(json) as string[];
  return [command === "node" ? process.execPath : (command as string), ...args];
}

/** Runs a command of the image in the payload folder with the runtime stage's environment. */
function inPayload(argv: string[], env: NodeJS.ProcessEnv = runtimeEnv) {
  const [command, ...args] = argv;
  return run(command as string, args, { cwd: payload, env, maxBuffer: 16 * 1024 * 1024 });
}

beforeAll(async () => {
  expect(existsSync(path.join(root, "dist", "serve.js")), "run `npm run build` first").toBe(true);
  expect(existsSync(path.join(root, ".next", "BUILD_ID")), "run `npm run build` first").toBe(true);
  expect(build, "a stage named build").toBeDefined();
  expect(workdir(build?.instructions)).toBe("/app");
  const runtimeDir = workdir(runtime?.instructions);
  // What the build stage deletes after building is not in the image (`RUN npm run build && rm -rf .next/cache`).
  const removedInBuild = (build?.instructions ?? [])
    .filter((instruction) => instruction.keyword === "RUN")
    .flatMap((instruction) => [...instruction.args.matchAll(/rm -rf ((?:[^\s&;]+\s*)+)/g)])
    .flatMap((match) => (match[1] ?? "").trim().split(/\s+/))
    .map((removed) => path.join(root, removed));
  const ignored = readFileSync(path.join(root, ".dockerignore"), "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#") && !line.startsWith("!"));

  for (const { keyword, args } of runtime?.instructions ?? []) {
    if (keyword !== "COPY") continue;
    const words = args.split(/\s+/);
    const from = words.find((word) => word.startsWith("--from="))?.slice("--from=".length);
    const [destination, ...sources] = words.filter((word) => !word.startsWith("--")).reverse();
    for (const source of sources.reverse()) {
      let local: string;
      if (from) {
        expect(from, "runtime COPY --from names the build stage").toBe("build");
        expect(source.startsWith("/app/"), `${source} is in the build stage's /app`).toBe(true);
        local = path.join(root, source.slice("/app/".length));
      } else {
        expect(ignored, `${source} is not excluded by .dockerignore`).not.toContain(source);
        local = path.join(root, source);
      }
      expect(existsSync(local), `the image copies ${source}, which the build does not have`).toBe(true);
      const target = path.resolve(
        payload,
        path.relative(runtimeDir, path.resolve(runtimeDir, destination as string)),
        destination?.endsWith("/") ? path.basename(source) : "",
      );
      mkdirSync(path.dirname(target), { recursive: true });
      cpSync(local, target, {
        recursive: true,
        filter: (file) => !removedInBuild.some((removed) => file === removed || file.startsWith(`${removed}/`)),
      });
    }
  }

  // The container's paths under WORKDIR become the payload folder's.
  const imageEnv = Object.fromEntries(
    Object.entries(stageEnv(runtime?.instructions ?? [])).map(([name, value]) => [
      name,
      value.startsWith(`${runtimeDir}/`) ? path.join(payload, value.slice(runtimeDir.length + 1)) : value,
    ]),
  );
  // Exactly what the container gets: the image's ENV and compose.yaml's `app` environment as resolved with
  // .env.example (its secrets and PUBLIC_URL filled in as the README's lines do), nothing of this test process's
  // environment but PATH; compose's host names become this machine's PostgreSQL (a fresh database) and Redis.
  const filled = path.join(mkdtempSync(path.join(tmpdir(), "crm-image-env-")), ".env");
  writeFileSync(
    filled,
    readFileSync(path.join(root, ".env.example"), "utf8")
      .replace(
        /^(\w+)=replace-with-openssl-rand-hex-32$/gm,
        (_, name: string) => `${name}=${randomBytes(32).toString("hex")}`,
      )
      .replace(/^PUBLIC_URL=.*$/m, "PUBLIC_URL=https://crm.acme.example"),
  );
  const resolved = await run(
    "docker-compose",
    ["-f", path.join(root, "compose.yaml"), "--env-file", filled, "config"],
    {
      cwd: root,
    },
  );
  const appEnv = (parseYaml(resolved.stdout) as { services: { app: { environment: Record<string, string> } } }).services
    .app.environment;
  expect(appEnv.DATABASE_URL).toMatch(/@postgres:5432\//);
  expect(appEnv.REDIS_URL).toBe("redis://redis:6379");
  expect(imageEnv.NODE_ENV, "the image sets NODE_ENV=production").toBe("production");
  runtimeEnv = {
    PATH: process.env.PATH,
    ...imageEnv,
    NODE_ENV: "production",
    ...appEnv,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    // Nothing answers on compose's http://inngest:8288 here; the app must start without it all the same.
    INNGEST_BASE_URL: "http://127.0.0.1:9",
    // Its own prefix on the shared Redis, so its windows and key cache meet no other test's.
    KV_PREFIX: `image-${randomBytes(3).toString("hex")}:`,
  };

  // Only the `npm ci` of the RUN line: the `npm cache clean` after it would empty this machine's shared npm cache.
  const install = (runtime?.instructions ?? [])
    .filter((instruction) => instruction.keyword === "RUN")
    .flatMap((instruction) => instruction.args.split("&&").map((part) => part.trim()))
    .find((command) => command.startsWith("npm ci"));
  expect(install, "the runtime stage installs with npm ci").toMatch(/--omit=dev/);
  // --prefer-offline: the same install, answered from this machine's npm cache where it can (an image build starts
  // with an empty one, where the flag changes nothing).
  await run("sh", ["-c", `${install} --prefer-offline`], {
    cwd: payload,
    env: process.env,
    maxBuffer: 16 * 1024 * 1024,
  });
  await admin(`CREATE DATABASE "${databaseName}"`);
}, 600_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    server.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (server.exitCode === null) server.kill("SIGKILL");
  }
  await rm(payload, { recursive: true, force: true });
  await admin(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
}, 300_000);

/** Starts the image's CMD on `port` in the payload folder and waits until GET /readyz answers 200. */
async function serveImage(port: number): Promise<void> {
  const cmd = runtime?.instructions.findLast((instruction) => instruction.keyword === "CMD")?.args ?? "[]";
  const [command, ...args] = execForm(cmd);
  serverOutput = "";
  server = spawn(command as string, args, { cwd: payload, env: { ...runtimeEnv, PORT: String(port) } });
  server.stdout?.on("data", (chunk) => {
    serverOutput += chunk;
  });
  server.stderr?.on("data", (chunk) => {
    serverOutput += chunk;
  });
  origin = `http://127.0.0.1:${port}`;
  let status = 0;
  const deadline = Date.now() + 60_000;
  while (status !== 200 && Date.now() < deadline && server.exitCode === null) {
    status = await fetch(`${origin}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(status, serverOutput.slice(-2_000)).toBe(200);
}

/** The migrate service's command (compose.yaml), run in the payload folder. */
function migrate() {
  const compose = parseYaml(readFileSync(path.join(root, "compose.yaml"), "utf8")) as {
    services: Record<string, { command?: string[] }>;
  };
  return inPayload(execForm(JSON.stringify(compose.services.migrate?.command ?? [])));
}

describe("the Dockerfile's runtime stage", () => {
  it("pins node:24.<minor>.<patch>-bookworm-slim in every stage and runs as the non-root node user", () => {
    for (const stage of stages) {
      expect(stage.instructions[0]?.args).toMatch(/^node:24\.\d+\.\d+-bookworm-slim\b/);
    }
    expect(runtime?.instructions.findLast((instruction) => instruction.keyword === "USER")?.args).toBe("node");
  });

  it("holds production dependencies only: none of the development tools (tsx, esbuild, vitest, biome)", () => {
    expect(existsSync(path.join(payload, "node_modules", "next"))).toBe(true);
    expect(existsSync(path.join(payload, "node_modules", "@prisma", "client"))).toBe(true);
    for (const tool of ["tsx", "esbuild", "vitest", "@biomejs/biome", "dependency-cruiser"]) {
      expect(existsSync(path.join(payload, "node_modules", tool)), tool).toBe(false);
    }
  });

  it("migrates a fresh database with compose's migrate command, serves with the image's CMD until /readyz is 200, and passes the HEALTHCHECK", async () => {
    const migrated = await migrate();
    expect(migrated.stdout).toMatch(/Done: applied \d+ migration\(s\)\./);

    const port = await freePort();
    await serveImage(port);

    const healthcheck = /CMD\s+(\[.*\])\s*$/.exec(
      runtime?.instructions.find((instruction) => instruction.keyword === "HEALTHCHECK")?.args ?? "",
    )?.[1];
    expect(healthcheck, "HEALTHCHECK CMD [...]").toBeDefined();
    await expect(
      inPayload(execForm(healthcheck as string), { ...runtimeEnv, PORT: String(port) }),
    ).resolves.toBeDefined();
  }, 120_000);

  it("runs the compiled admin command: its key reads the API; the settings pages render", async () => {
    const { stdout } = await inPayload([
      process.execPath,
      "dist/admin.js",
      "create-key",
      "--org",
      "image",
      "--scopes",
      "accounts:read",
      "--json",
    ]);
    const { key } = JSON.parse(stdout.trim());
    const accounts = await fetch(`${origin}/api/v1/accounts`, { headers: { Authorization: `Bearer ${key}` } });
    expect(accounts.status).toBe(200);
    expect((await accounts.json()).data).toEqual([]);
    const signin = await fetch(`${origin}/signin`);
    expect(signin.status).toBe(200);
  }, 60_000);

  it("backs up with pg_dump while serving; pg_restore with the app stopped, migrate and start bring that back", async () => {
    const { stdout } = await inPayload([
      process.execPath,
      "dist/admin.js",
      "create-key",
      "--org",
      "image-backup",
      "--scopes",
      "accounts:write",
      "--json",
    ]);
    const headers = { Authorization: `Bearer ${JSON.parse(stdout.trim()).key}`, "Content-Type": "application/json" };
    const create = async (name: string) => {
      const res = await fetch(`${origin}/api/v1/accounts`, { method: "POST", headers, body: JSON.stringify({ name }) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { data: { id: string } }).data.id;
    };
    const kept = await create("In the backup");
    const dump = path.join(payload, "..", `${databaseName}.dump`);
    await run("pg_dump", ["-Fc", "-f", dump, "-d", databaseUrl]);
    const lost = await create("After the backup");

    const stopped = new Promise((resolve) => server?.once("exit", resolve));
    server?.kill("SIGTERM");
    await stopped;
    try {
      await run("pg_restore", ["--clean", "--if-exists", "--single-transaction", "-d", databaseUrl, dump]);
    } finally {
      await rm(dump, { force: true });
    }
    expect((await migrate()).stdout).toContain("Database is up to date; no migrations applied.");
    await serveImage(await freePort());
    const read = (id: string) => fetch(`${origin}/api/v1/accounts/${id}`, { headers }).then((res) => res.status);
    expect(await read(kept)).toBe(200);
    expect(await read(lost)).toBe(404);
  }, 120_000);

  it("ships build output only, no sources, and reports the payload's size", async () => {
    for (const source of ["server", "app", "scripts", "test", "prisma/schema.prisma", "tsconfig.json"]) {
      expect(existsSync(path.join(payload, source)), source).toBe(false);
    }
    const sizes = Object.fromEntries(
      await Promise.all(
        ["", "node_modules", ".next", "dist"].map(async (part) => {
          const { stdout } = await run("du", ["-sb", path.join(payload, part)]);
          return [part || "total", Math.round(Number(stdout.split(/\s/)[0]) / 1_048_576)];
        }),
      ),
    );
    mkdirSync(path.join(root, ".ci", "tmp"), { recursive: true });
    writeFileSync(path.join(root, ".ci", "tmp", "container-payload.json"), `${JSON.stringify({ mb: sizes })}\n`);
    console.log(`container payload: ${JSON.stringify(sizes)} MB`);
  });
});
