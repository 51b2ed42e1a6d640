// The TypeScript client (sdk/) against the in-process facade on PostgreSQL: its generated files match the served
// document, its resource methods, and the cases of sdk.suite.ts (bulk typed by mode, every resource, webhook endpoints
// with a real delivery verified, path-typed calls, pagination over 1,050 records, a create retried under injected 503s
// that creates exactly one record, typed errors, following the events feed). start.test.ts runs the webhook and retry
// cases against `npm start` on the embedded database.
process.env.WEBHOOKS_ALLOW_LOOPBACK = "true";

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdkFiles } from "../../../scripts/sdk-generate";
import { createClient } from "../../../sdk/src/index";
import { createTestOrg, startApi, type TestServer } from "../../helpers/api";
import { type Receiver, startReceiver } from "../../helpers/receiver";
import { clientCases, resourceMethodCases, retryCases, type SdkTarget, webhookCases } from "./sdk.suite";

let server: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  server = await startApi();
  receiver = await startReceiver();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

const target: SdkTarget = {
  baseUrl: () => server.url,
  newKey: async () => (await createTestOrg()).key,
  receiver: () => receiver,
};

it("has types and resource methods generated from the document the API serves (npm run sdk:generate)", async () => {
  for (const { file, text } of await sdkFiles()) {
    expect(readFileSync(file, "utf8") === text, `${file} is out of date: run npm run sdk:generate`).toBe(true);
  }
});

describe("resource methods (generated from the document)", () => {
  it("offers list/get/create/update/delete/bulk on every resource, webhook endpoints and the events feed", () => {
    const crm = createClient({ apiKey: "msp_test_x", baseUrl: server.url });
    const methods = (resource: object) => Object.keys(resource).sort();
    expect(methods(crm.accounts)).toEqual(["bulk", "create", "delete", "get", "list", "update"]);
    expect(methods(crm.contacts)).toEqual(["bulk", "create", "erase", "get", "list", "update"]);
    expect(methods(crm.deals)).toEqual(["bulk", "create", "get", "list", "update"]);
    expect(methods(crm.devices)).toEqual(["bulk", "create", "delete", "get", "list", "update"]);
    expect(methods(crm.tasks)).toEqual(["create", "delete", "get", "list", "update"]);
    expect(methods(crm.touchpoints)).toEqual(["create", "get", "list"]);
    expect(methods(crm.notes)).toEqual(["create", "get", "list"]);
    expect(methods(crm.healthScores)).toEqual(["get", "list", "pushSignal"]);
    expect(methods(crm.mrr)).toEqual(["get"]);
    expect(methods(crm.status)).toEqual(["get"]);
    expect(methods(crm.events)).toEqual(["follow", "get", "list"]);
    expect(methods(crm.webhookEndpoints)).toEqual([
      "cancelReplay",
      "create",
      "delete",
      "deliveries",
      "get",
      "getReplay",
      "list",
      "redeliver",
      "replay",
      "replays",
      "rotateSecret",
      "test",
      "update",
    ]);
  });

  resourceMethodCases(target);
  webhookCases(target);
});

describe("the client against a live server", () => {
  clientCases(target);
  retryCases(target);
});
