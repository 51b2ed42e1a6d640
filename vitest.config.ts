import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["server/**/*.test.ts", "test/**/*.test.ts", "scripts/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    pool: "forks",
    isolate: true,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default", ["json", { outputFile: ".ci/tmp/vitest.json" }]],
  },
});
