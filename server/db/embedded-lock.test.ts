// Whether the owner of an embedded database's lock is still running (docs/architecture.md, "The embedded database").
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { alive } from "./embedded-lock";

describe("alive", () => {
  it("is true for a running process and false for one that has ended", async () => {
    expect(alive(process.pid)).toBe(true);
    const child = spawn("sleep", ["0"]);
    await new Promise((resolve) => child.once("exit", resolve));
    expect(alive(child.pid as number)).toBe(false);
  });

  it("counts a process that has exited but that its parent has not collected (a zombie) as ended", async () => {
    // `sh` starts a short `sleep` in the background, then becomes a long one that never collects it.
    const parent = spawn("sh", ["-c", "sleep 0.1 & echo $!; exec sleep 5"], { stdio: ["ignore", "pipe", "ignore"] });
    const pid = Number(
      await new Promise<string>((resolve) => parent.stdout.once("data", (data) => resolve(String(data)))),
    );
    try {
      await sleep(600);
      expect(process.kill(pid, 0)).toBe(true);
      expect(alive(pid)).toBe(false);
    } finally {
      parent.kill("SIGKILL");
    }
  });
});
