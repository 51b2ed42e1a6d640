import { openApiDocument } from "./openapi";

type Json = Record<string, unknown>;

/** A request of the converted collection, as far as this module reads and changes it. */
interface PostmanRequest {
  name: string;
  request: {
    method: string;
    url: { path: string[]; variable?: Array<{ key: string; value: string }> };
    body?: { mode?: string; raw?: string };
  };
  event?: Json[];
}

/** How a request takes part in the run: what it is, which variables it needs and which it stores. */
interface Step {
  item: PostmanRequest;
  folder: number;
  rank: number;
  needs: Set<string>;
  stores: Array<{ variable: string; from: string }>;
  status: number;
}

// Where a request sits in its folder: creates first, then bulk, list, read, update, actions on a record, lists under a
// record, and deletions last, so a folder reads, changes and deletes what it created.
const RANK = { create: 0, bulk: 1, list: 2, get: 3, update: 4, action: 5, sublist: 6, delete: 9 } as const;

/** `webhook-endpoints` → `webhookEndpoint`, `deliveries` → `delivery`: the variable stem of a resource path segment. */
function singular(segment: string): string {
  const camel = segment.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
  return camel.endsWith("ies") ? `${camel.slice(0, -3)}y` : camel.replace(/s$/, "");
}

/** The collection variable a path parameter of `segments` takes: `accountId` for /health-scores/{accountId}. */
function variableFor(segments: readonly string[], parameter: string): string {
  return parameter === "id" ? `${singular(segments[0] ?? "")}Id` : parameter;
}

/** The variable that fills a body field naming a record, if any (`accountId`, `contactId`, `dealId`, a note's object). */
function bodyVariable(key: string, holder: Json): string | undefined {
  if (key === "objectId" && typeof holder.objectType === "string") return `${holder.objectType.toLowerCase()}Id`;
  return /^(account|contact|deal)Id$/.test(key) ? key : undefined;
}

// Fields unique per organisation that a create takes: a fresh value per run keeps the collection runnable again.
const UNIQUE_FIELDS = new Set(["externalId", "email", "rmmAgentId"]);
// Times a request must give within a window of the present (a replay's since, within the events' retention): the
// time of the run, Postman's `{{$isoTimestamp}}`.
const NOW_FIELDS = new Set(["since"]);

/**
 * The example body with record ids replaced by the collection variables a create stored, a replay's `since` by the time
 * of the run, and (for creates) unique keys made fresh with Postman's `{{$guid}}`.
 */
function chainBody(value: unknown, create: boolean, needs: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => chainBody(item, create, needs));
  if (!value || typeof value !== "object") return value;
  const holder = value as Json;
  return Object.fromEntries(
    Object.entries(holder).map(([key, field]) => {
      const variable = typeof field === "string" ? bodyVariable(key, holder) : undefined;
      if (variable) {
        needs.add(variable);
        return [key, `{{${variable}}}`];
      }
      if (typeof field === "string" && NOW_FIELDS.has(key)) return [key, "{{$isoTimestamp}}"];
      if (create && typeof field === "string" && UNIQUE_FIELDS.has(key)) {
        return [key, key === "email" ? field.replace("@", "+{{$guid}}@") : `${field}-{{$guid}}`];
      }
      return [key, chainBody(field, create, needs)];
    }),
  );
}

// A key's plan may allow fewer requests a minute than the collection holds (the starter plan: 30). A 429 changed
// nothing, so the request is sent again after its Retry-After (at most 60 seconds), and the run goes on as downloaded.
const RATE_LIMITED = [
  "if (pm.response.code === 429) {",
  '  const seconds = Math.min(Math.max(Number(pm.response.headers.get("Retry-After")) || 1, 1), 60);',
  '  console.log("429 rate_limited: sending this request again in " + seconds + " s");',
  "  pm.execution.setNextRequest(pm.info.requestId);",
  "  setTimeout(() => {}, seconds * 1000);",
  "  return;",
  "}",
];

/**
 * The script of a request's "test" event: on 429 waits Retry-After and sends the request again; otherwise checks the
 * documented status and stores what later requests need.
 */
function testScript(step: Step): Json {
  const exec = [
    "(() => {",
    ...RATE_LIMITED,
    `pm.test("answers ${step.status}", () => pm.response.to.have.status(${step.status}));`,
    ...(step.stores.length > 0
      ? [
          `if (pm.response.code === ${step.status}) {`,
          "  const data = pm.response.json().data;",
          ...step.stores.map(
            ({ variable, from }) => `  if (${from} != null) pm.collectionVariables.set("${variable}", ${from});`,
          ),
          "}",
        ]
      : []),
    "})();",
  ];
  return { listen: "test", script: { type: "text/javascript", exec } };
}

/**
 * Makes the converted collection run as downloaded: folders in the document's tag order, each folder's requests in the
 * order create, bulk, list, get, update, actions, deletions (a request that needs a variable runs after the one that
 * stores it); creates store the new record's id in a collection variable (`accountId`, `contactId`, …) that later path
 * parameters and bodies use; lists store an id a later request needs when no create stores it (`eventId`,
 * `deliveryId`); a folder's delete removes the record its bulk made when later folders still use the one it created;
 * every request tests its documented success status.
 * @returns the names of the collection variables the requests store.
 */
function chain(collection: Json, document: Json): string[] {
  const tags = ((document.tags as Array<{ name: string }> | undefined) ?? []).map((tag) => tag.name);
  const paths = document.paths as Record<string, Record<string, Json>>;
  const folders = [...((collection.item as Array<{ name: string; item: PostmanRequest[] }>) ?? [])].sort(
    (a, b) => tags.indexOf(a.name) - tags.indexOf(b.name),
  );

  const steps: Step[] = folders.flatMap((folder, index) =>
    folder.item.map((item) => {
      const segments = item.request.url.path;
      const template = `/${segments.map((part) => part.replace(/^:(.+)$/, "{$1}")).join("/")}`;
      const method = item.request.method.toLowerCase();
      const operation = paths[template]?.[method];
      const responses = (operation?.responses ?? {}) as Record<string, unknown>;
      // An operation with two success answers (bulk's 207, a dry run's 200) names the one its example gets.
      const status = Number(
        operation?.["x-success-status"] ?? Object.keys(responses).find((code) => /^2\d\d$/.test(code)) ?? 200,
      );
      const params = segments.filter((part) => part.startsWith(":")).map((part) => part.slice(1));
      const last = segments[segments.length - 1] ?? "";
      // An erasure removes its record as a delete does, so it is ordered and redirected like one; a structured search
      // (POST /{resource}/search) reads as a list does.
      const kind =
        method === "delete" || last === "erase"
          ? "delete"
          : method === "patch"
            ? "update"
            : method === "get" || last === "search"
              ? params.length === 0
                ? "list"
                : last.startsWith(":")
                  ? "get"
                  : "sublist"
              : last === "bulk"
                ? "bulk"
                : params.length === 0
                  ? "create"
                  : "action";
      const needs = new Set(params.map((parameter) => variableFor(segments, parameter)));
      const step: Step = { item, folder: index, rank: RANK[kind], needs, stores: [], status };
      const stem = singular(segments[0] ?? "");
      if (kind === "create") step.stores.push({ variable: `${stem}Id`, from: "data.id" });
      if (kind === "bulk") step.stores.push({ variable: `${stem}BulkId`, from: "data.results.at(-1)?.id" });
      const body = item.request.body;
      if (body?.mode === "raw" && body.raw) {
        body.raw = JSON.stringify(chainBody(JSON.parse(body.raw), kind === "create", needs), null, 2);
      }
      return step;
    }),
  );

  // A delete must not remove a record later folders still use: it takes the one its folder's bulk made instead.
  for (const step of steps.filter((s) => s.rank === RANK.delete)) {
    const [variable] = step.needs;
    if (!variable) continue;
    const usedLater = steps.some((other) => other.folder > step.folder && other.needs.has(variable));
    const bulkVariable = variable.replace(/Id$/, "BulkId");
    if (usedLater && steps.some((other) => other.stores.some((stored) => stored.variable === bulkVariable))) {
      step.needs = new Set([bulkVariable]);
    }
  }
  // Lists store what a later request needs when no create stores it: the first item's field of that name, else its id.
  const storedByCreate = new Set(steps.flatMap((step) => step.stores.map((stored) => stored.variable)));
  for (const step of steps.filter((s) => s.rank === RANK.list || s.rank === RANK.sublist)) {
    const stem = singular(step.item.request.url.path.at(-1) ?? "");
    for (const variable of new Set(steps.flatMap((other) => [...other.needs]))) {
      if (storedByCreate.has(variable) || step.stores.some((stored) => stored.variable === variable)) continue;
      if (variable === `${stem}Id`) step.stores.push({ variable, from: `(data[0]?.${variable} ?? data[0]?.id)` });
    }
  }

  const needed = new Set(steps.flatMap((step) => [...step.needs]));
  for (const step of steps) step.stores = step.stores.filter((entry) => needed.has(entry.variable));

  // Each folder in rank order, a request moved after the one that stores what it needs.
  const stored = new Set<string>();
  const stores = new Set(steps.flatMap((step) => step.stores.map((s) => s.variable)));
  folders.forEach((folder, index) => {
    const pending = steps.filter((step) => step.folder === index).sort((a, b) => a.rank - b.rank);
    const ordered: Step[] = [];
    while (pending.length > 0) {
      const ready = pending.findIndex((step) => [...step.needs].every((v) => stored.has(v) || !stores.has(v)));
      const [next] = pending.splice(ready === -1 ? 0 : ready, 1);
      if (!next) break;
      ordered.push(next);
      for (const { variable } of next.stores) stored.add(variable);
    }
    for (const step of ordered) {
      const segments = step.item.request.url.path;
      for (const variable of step.item.request.url.variable ?? []) {
        variable.value = `{{${step.rank === RANK.delete ? [...step.needs][0] : variableFor(segments, variable.key)}}}`;
      }
      step.item.event = [...(step.item.event ?? []).filter((event) => event.listen !== "test"), testScript(step)];
    }
    folder.item = ordered.map((step) => step.item);
  });
  collection.item = folders;
  return [...stores].sort();
}

/** What the collection's description says first: how to run it. */
const RUN_GUIDE = `**Running this collection.** Set the collection variable apiKey to a live key (msp_live_) with every scope (a new organisation's is fine: the run creates what it reads), then run the collection; with a test key "Send a test event" and "Redeliver" answer 403, since test keys send no webhooks. Folders run in order, and within each folder the create runs first: it stores the new record's id in a collection variable (accountId, contactId, dealId, …) that later requests use in their paths and bodies; unique keys (externalId, email, rmmAgentId) get a fresh {{$guid}} so the run can be repeated. Every request tests its documented success status. The webhook endpoint it registers points at https://psa.example.com, which is not a receiver: "Send a test event" and "Redeliver" still answer 200, with the failed attempt in the answer. Put a receiver you control in the create request's url to see a delivery.`;

// Collections per public origin (see openapi.ts); the oldest is dropped past this many.
const MAX_CACHED_ORIGINS = 16;
const cache = new Map<string, Promise<string>>();

async function build(baseUrl: string): Promise<string> {
  // Loaded on the first request for a collection: the converter takes about 0.5 s of CPU to import at start-up.
  const { convertV2 } = await import("openapi-to-postmanv2");
  // A copy of its own: the converter changes the document it is given.
  const document = openApiDocument(baseUrl);
  const result = await new Promise<{ result: boolean; reason?: string; output?: Array<{ data: Json }> }>(
    (resolve, reject) => {
      convertV2(
        { type: "json", data: document },
        {
          folderStrategy: "Tags",
          requestNameSource: "Fallback",
          // Bodies and parameter values from the documented examples, not made-up values.
          parametersResolution: "Example",
          // Optional query parameters are listed but off, so each request runs as it stands.
          enableOptionalParameters: false,
          // Every request uses the collection's Bearer {{apiKey}}; none overrides it with a variable of its own.
          alwaysInheritAuthentication: true,
        },
        (error, converted) => (error ? reject(error) : resolve(converted as never)),
      );
    },
  );
  const collection = result.output?.[0]?.data;
  if (!result.result || !collection)
    throw new Error(`OpenAPI to Postman conversion failed: ${result.reason ?? "no output"}`);
  const stored = chain(collection, openApiDocument(baseUrl));
  const variables = ((collection.variable as Json[] | undefined) ?? []).filter(
    (v) => v.key !== "baseUrl" && v.key !== "apiKey",
  );
  collection.variable = [
    { key: "baseUrl", value: `${baseUrl}/api/v1`, type: "string" },
    { key: "apiKey", value: "msp_test_replace_me", type: "string" },
    ...stored.map((key) => ({ key, value: "", type: "string" })),
    ...variables,
  ];
  collection.auth = { type: "bearer", bearer: [{ key: "token", value: "{{apiKey}}", type: "string" }] };
  const info = collection.info as Json & { description?: { content?: string; type?: string } };
  info.description = { content: `${RUN_GUIDE}\n\n${info.description?.content ?? ""}`, type: "text/markdown" };
  return JSON.stringify(collection);
}

/**
 * The importable request collection (docs/api-contract.md §1, §4.8): the OpenAPI document converted by
 * `openapi-to-postmanv2`, with collection variables `baseUrl` (this server's `/api/v1`) and `apiKey` used as the
 * collection's Bearer auth, chained so that it runs as downloaded against an organisation with nothing in it (creates
 * first, their ids kept in collection variables for the requests after them; docs/architecture.md, "The REST facade").
 * Cached per base URL.
 * @throws Error when the converter refuses the document (a bug: the document is generated).
 */
export function postmanText(baseUrl: string): Promise<string> {
  let collection = cache.get(baseUrl);
  if (!collection) {
    collection = build(baseUrl);
    collection.catch(() => cache.delete(baseUrl));
    if (cache.size >= MAX_CACHED_ORIGINS) cache.delete(cache.keys().next().value as string);
    cache.set(baseUrl, collection);
  }
  return collection;
}
