// Layer rules of the service (docs/architecture.md, "Layers and the request pipeline"), checked in CI by
// `npm run lint:layers`:
//
//   app/, scripts/, bench/, inngest/functions/   entry points
//   server/http/                                 the REST facade's pipeline
//   server/routers/, server/trpc.ts              tRPC procedures
//   server/services/, server/webhooks/           domain rules and the data they own
//   server/schemas/                              zod resource schemas, below routers and services
//   server/db/, server/kv/, server/auth/, server/observability/, server/env.ts, server/errors.ts, inngest/client.ts
//                                                the base
//
// Imports run one way, down this list; nothing imports a file in a circle.
const UP_FROM_HTTP = "^(app|scripts|bench|e2e|test)/";
const UP_FROM_ROUTERS = "^(app|scripts|bench|e2e|test|server/http)/";
const UP_FROM_SERVICES = "^(app|scripts|bench|e2e|test|server/http|server/routers|server/trpc\\.ts|inngest/functions)";
const UP_FROM_SCHEMAS =
  "^(app|scripts|bench|e2e|test|server/(http|routers|services|webhooks|db|kv|observability)|server/trpc\\.ts|inngest)";
const UP_FROM_BASE =
  "^(app|scripts|bench|e2e|test|server/(http|routers|services|webhooks|schemas)|server/trpc\\.ts|inngest/functions)";

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A circle of imports has no bottom layer: split the shared part into a module both can import.",
      from: {},
      to: { circular: true },
    },
    {
      name: "http-only-down",
      severity: "error",
      comment: "The facade is imported by entry points (app, scripts, tests) only.",
      from: { path: "^server/http/" },
      to: { path: UP_FROM_HTTP },
    },
    {
      name: "routers-only-down",
      severity: "error",
      comment: "Procedures call services; they never reach into the facade.",
      from: { path: "^server/(routers/|trpc\\.ts)" },
      to: { path: UP_FROM_ROUTERS },
    },
    {
      name: "services-only-down",
      severity: "error",
      comment:
        "Services (and the webhook folder) own the rules and the data; they never import procedures or the facade.",
      from: { path: "^server/(services|webhooks)/" },
      to: { path: UP_FROM_SERVICES },
    },
    {
      name: "schemas-are-below-routers-and-services",
      severity: "error",
      comment: "Resource schemas are shared by routers and services; they import only zod, errors and each other.",
      from: { path: "^server/schemas/" },
      to: { path: UP_FROM_SCHEMAS },
    },
    {
      name: "base-imports-only-base",
      severity: "error",
      comment: "db, kv, auth, observability, env and errors are the base every layer stands on.",
      // A unit test beside its module may use the test helpers, as no-test-code-in-product allows.
      from: {
        path: "^(server/(db|kv|auth|observability)/|server/(env|errors)\\.ts|inngest/client\\.ts)",
        pathNot: "\\.test\\.ts$",
      },
      to: { path: UP_FROM_BASE },
    },
    {
      name: "no-test-code-in-product",
      severity: "error",
      comment: "Product code never imports tests or benchmarks.",
      from: { path: "^(server|app|inngest|scripts)/", pathNot: "\\.test\\.ts$" },
      to: { path: "^(test|e2e|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|\\.next|server/db/generated)/" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
  },
};
