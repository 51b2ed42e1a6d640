// Request body limits: 1 MiB and 32 levels of JSON nesting, answered with 413 in the envelope.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { MAX_BODY_BYTES } from "../../../server/http/input";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let orgId: string;
let key: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startApi();
  ({ orgId, key } = await createTestOrg());
  api = client(server.url, key);
});
afterAll(() => server.close());

function expectTooLarge(res: { status: number; body: { success: boolean; error: { code: string; message: string } } }) {
  expect(res.status).toBe(413);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe("payload_too_large");
}

describe("request body limits", () => {
  it("refuses a body over 1 MiB declared by Content-Length", async () => {
    const name = "x".repeat(MAX_BODY_BYTES);
    const res = await api("POST", "/accounts", JSON.stringify({ name }));
    expectTooLarge(res);
    expect(res.body.error.message).toContain("1 MiB");
    expect(await prisma().account.count({ where: { orgId } })).toBe(0);
  });

  it("refuses a chunked body once it passes 1 MiB, without reading the rest", async () => {
    let sent = 0;
    const chunk = new TextEncoder().encode(`${"y".repeat(64 * 1024)}`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"'));
      },
      pull(controller) {
        // 64 MiB would follow if the server kept reading.
        if (sent >= 64 * 1024 * 1024) controller.close();
        else {
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        }
      },
    });
    // The server answers 413 and drops the connection instead of reading the rest, so depending on timing the client
    // sees the 413 or a reset while still uploading; either way the upload is cut short.
    const outcome = await fetch(`${server.url}/accounts`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit).then(
      async (response) => ({ status: response.status, body: await response.json() }),
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
    );
    expect(sent).toBeLessThan(8 * 1024 * 1024);
    if (typeof outcome === "string") expect(outcome).toMatch(/ECONNRESET|EPIPE|other side closed/);
    else expectTooLarge(outcome);
    expect((await api("GET", "/accounts?limit=1")).status).toBe(200);
  });

  it("refuses JSON nested deeper than 32 levels and keeps serving", async () => {
    const depth = 100_000;
    const res = await api("POST", "/accounts", `{"name":${"[".repeat(depth)}${"]".repeat(depth)}}`);
    expectTooLarge(res);
    expect(res.body.error.message).toContain("32 levels");
    const brackets = "[".repeat(40);
    const inString = await api("POST", "/accounts", JSON.stringify({ name: `${brackets} in a name` }));
    expect(inString.status).toBe(201);
    expect((await api("GET", "/accounts?limit=1")).status).toBe(200);
  });

  it("accepts a bulk request of 500 items, well under the limit", async () => {
    const accounts = Array.from({ length: 500 }, (_, i) => ({
      name: `Bulk account with a fairly long descriptive name number ${i}`,
      externalId: `limits-${i}`,
      industry: "Professional services",
      domain: `bulk-${i}.example.com`,
      employeeCount: i,
    }));
    expect(JSON.stringify({ accounts }).length).toBeLessThan(MAX_BODY_BYTES / 4);
    const res = await api("POST", "/accounts/bulk", { accounts });
    expect(res.status).toBe(200);
    expect(res.body.data.results).toHaveLength(500);
  });
});
