// Layer and domain rules of the service (docs/architecture.md, "The map"), checked in CI by `npm run lint`.
//
// Domains are folders of server/: records/, platform/, identity/, webhooks/, demo/ (and contract/, the shared zod
// pieces of the public contract). Within them a file's role is its name:
//
//   app/, scripts/, bench/, inngest/functions/      entry points
//   server/http/, server/settings/router.ts         the REST facade and the settings router
//   procedures.ts, settings-procedures.ts,          tRPC procedures
//   server/trpc.ts, server/settings/trpc.ts
//   any other file of a domain                      services: the rules and the data they own
//   schema.ts, *.schema.ts, server/contract/        zod schemas, below procedures and services
//   server/db/, server/kv/, server/observability/,  the base
//   server/env.ts, server/errors.ts, inngest/client.ts
//
// Imports run one way, down this list; nothing imports a file in a circle. A domain uses another only through the
// files it offers (PUBLIC below): its schemas, and the services named there.
const ENTRY = "^(app|scripts|bench|e2e|test)/";
const FACADE = "^server/(http/|settings/router\\.ts)";
const PROCEDURES = "^server/(trpc\\.ts|settings/trpc\\.ts|.+/(settings-)?procedures\\.ts)";
const SCHEMAS = "^server/(contract/|.+/schema\\.ts|.+\\.schema\\.ts)";
const BASE = "^(server/(db|kv|observability)/|server/(env|errors)\\.ts|inngest/client\\.ts)";
const DOMAINS = "^server/(records|platform|identity|webhooks|demo)/";

// What one domain may import from another (besides its schemas): the services it offers.
const PUBLIC = [
  // records: the events every write records, keyset pages, the resources other domains read, erasure, search's re-index
  "server/records/events\\.ts",
  "server/records/resource\\.ts",
  "server/records/(preconditions|pagination)\\.ts",
  "server/records/(accounts|contacts|deals|devices|tasks|notes|touchpoints)/service\\.ts",
  "server/records/custom-fields/(values|service)\\.ts",
  "server/records/health/(model|refresh|service)\\.ts",
  "server/records/search/reindex\\.ts",
  "server/records/erasure/service\\.ts",
  // platform: keys, limits, idempotency, the request log, organisations, mail, the client address
  "server/platform/api-keys/(format|scopes|service|rotation|key-cache|recognition)\\.ts",
  "server/platform/limits/[^/]+\\.ts",
  "server/platform/(idempotency|organisations|mail|client-address)\\.ts",
  "server/platform/request-log/(record|usage|usage-rollup|usage-export)\\.ts",
  "server/platform/events-feed/service\\.ts",
  "server/platform/status/(service|startup)\\.ts",
  // identity: better-auth, sessions, roles, the audit trail, the team's operator actions
  "server/identity/(better-auth|session|roles|secret|passwords|attempts|password-reset)\\.ts",
  "server/identity/audit-trail/service\\.ts",
  "server/identity/team/(operator|organisation-settings)\\.ts",
  // webhooks: endpoints, deliveries and the rest of its services
  "server/webhooks/(?!procedures|settings-procedures)[^/]+\\.ts",
  "server/demo/(demo|seed)\\.ts",
];
const PUBLIC_PATH = `^(${PUBLIC.join("|")})$`;

/** One rule per domain: its files import another domain's files only when those are public or schemas. */
const domainRules = ["records", "platform", "identity", "webhooks", "demo"].map((domain) => ({
  name: `${domain}-uses-other-domains-through-public-files`,
  severity: "error",
  comment: `A domain reaches another through the files it offers (PUBLIC in .dependency-cruiser.cjs) or its schemas.`,
  from: { path: `^server/${domain}/` },
  to: {
    path: DOMAINS,
    pathNot: [`^server/${domain}/`, PUBLIC_PATH, SCHEMAS],
  },
}));

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
      name: "facade-only-down",
      severity: "error",
      comment: "The facade and the settings router are imported by entry points (app, scripts, tests) only.",
      from: { path: FACADE },
      to: { path: ENTRY },
    },
    {
      name: "procedures-only-down",
      severity: "error",
      comment: "Procedures call services; they never reach into the facade.",
      from: { path: PROCEDURES },
      to: { path: [ENTRY, FACADE] },
    },
    {
      name: "services-only-down",
      severity: "error",
      comment: "Services own the rules and the data; they never import procedures or the facade.",
      from: { path: DOMAINS, pathNot: [PROCEDURES, SCHEMAS, "\\.test\\.ts$"] },
      to: { path: [ENTRY, FACADE, PROCEDURES, "^inngest/functions/"] },
    },
    {
      name: "schemas-are-below-procedures-and-services",
      severity: "error",
      comment:
        "Schemas are shared by procedures and services; they import only zod, errors, each other and the key scopes.",
      from: { path: SCHEMAS },
      to: {
        path: ["^(app|scripts|bench|e2e|test|inngest)/", "^server/"],
        pathNot: [SCHEMAS, BASE, "^server/platform/api-keys/scopes\\.ts$"],
      },
    },
    {
      name: "base-imports-only-base",
      severity: "error",
      comment: "db, kv, observability, env and errors are the base every layer stands on.",
      // A unit test beside its module may use the test helpers, as no-test-code-in-product allows.
      from: { path: BASE, pathNot: "\\.test\\.ts$" },
      to: { path: ["^(app|scripts|bench|e2e|test|inngest/functions)/", "^server/"], pathNot: BASE },
    },
    ...domainRules,
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
