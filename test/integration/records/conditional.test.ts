// Conditional requests (ETag, If-None-Match → 304, If-Match → 412 precondition_failed; docs/api-contract.md §4.13) and
// the IETF RateLimit-Policy / RateLimit headers beside the contract's X-RateLimit-* ones (docs/api-contract.md §8.3).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, createTestOrg, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startApi();
  api = client(server.url, (await createTestOrg()).key);
});
afterAll(() => server.close());

describe("conditional requests", () => {
  it("tags single records and answers 304 to If-None-Match while they are unchanged", async () => {
    const created = await api("POST", "/accounts", { name: "Tagged" });
    const tag = created.headers.get("etag");
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const read = await api("GET", `/accounts/${created.body.data.id}`);
    expect(read.headers.get("etag")).toBe(tag);

    const same = await api("GET", `/accounts/${created.body.data.id}`, undefined, { "If-None-Match": tag ?? "" });
    expect(same.status).toBe(304);
    expect(same.body).toBeUndefined();
    expect(same.headers.get("etag")).toBe(tag);
    expect(same.headers.get("x-request-id")).toMatch(/^req_/);
    expect(same.headers.get("x-ratelimit-limit")).not.toBeNull();
    const weak = await api("GET", `/accounts/${created.body.data.id}`, undefined, { "If-None-Match": `"x", W/${tag}` });
    expect(weak.status).toBe(304);

    await api("PATCH", `/accounts/${created.body.data.id}`, { industry: "Legal" });
    const changed = await api("GET", `/accounts/${created.body.data.id}`, undefined, { "If-None-Match": tag ?? "" });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(tag);
    // Lists carry no ETag.
    expect((await api("GET", "/accounts")).headers.get("etag")).toBeNull();
    // An idempotent replay carries the tag of the answer it replays.
    const first = await api("POST", "/accounts", { name: "Replayed" }, { "Idempotency-Key": "etag-replay" });
    const replay = await api("POST", "/accounts", { name: "Replayed" }, { "Idempotency-Key": "etag-replay" });
    expect(replay.headers.get("x-idempotent-replay")).toBe("true");
    expect(replay.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(replay.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });

  it("applies a PATCH or DELETE with If-Match only to the version that was read, else 412", async () => {
    const account = await api("POST", "/accounts", { name: "Guarded" });
    const id = account.body.data.id;
    const tag = account.headers.get("etag") ?? "";

    const first = await api("PATCH", `/accounts/${id}`, { industry: "Retail" }, { "If-Match": tag });
    expect(first.status).toBe(200);
    const newTag = first.headers.get("etag");
    expect((await api("GET", `/accounts/${id}`)).headers.get("etag")).toBe(newTag);

    const stale = await api("PATCH", `/accounts/${id}`, { industry: "Legal" }, { "If-Match": tag });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ success: false, error: { code: "precondition_failed" } });
    expect(stale.headers.get("etag")).toBe(newTag);
    expect((await api("GET", `/accounts/${id}`)).body.data.industry).toBe("Retail");

    expect((await api("DELETE", `/accounts/${id}`, undefined, { "If-Match": tag })).status).toBe(412);
    expect((await api("GET", `/accounts/${id}`)).body.data.lifecycleStatus).not.toBe("CHURNED");
    expect((await api("DELETE", `/accounts/${id}`, undefined, { "If-Match": newTag ?? "" })).status).toBe(200);
    expect((await api("PATCH", `/accounts/nosuchaccount1`, { name: "x" }, { "If-Match": tag })).status).toBe(404);
    const onCreate = await api("POST", "/accounts", { name: "x" }, { "If-Match": tag });
    expect(onCreate.status).toBe(400);
    expect(onCreate.body.error.details).toEqual([{ path: ["If-Match"], message: "not supported on this operation" }]);
  });

  it("lets exactly one of two concurrent writers with the same If-Match win", async () => {
    const task = await api("POST", "/tasks", { title: "Race" });
    const tag = task.headers.get("etag") ?? "";
    const results = await Promise.all(
      ["Alice", "Bob", "Carol", "Dan"].map((who) =>
        api("PATCH", `/tasks/${task.body.data.id}`, { assigneeId: who }, { "If-Match": tag }),
      ),
    );
    expect(results.map((res) => res.status).sort()).toEqual([200, 412, 412, 412]);
    const winner = results.find((res) => res.status === 200)?.body.data.assigneeId;
    expect((await api("GET", `/tasks/${task.body.data.id}`)).body.data.assigneeId).toBe(winner);
  });

  it("refuses an If-None-Match or If-Match longer than 8,192 characters: 400 bad_request naming the header", async () => {
    const created = await api("POST", "/accounts", { name: "Long condition" });
    const tags = Array.from({ length: 300 }, () => created.headers.get("etag")).join(", ");
    expect(tags.length).toBeGreaterThan(8_192);
    for (const [method, name] of [
      ["GET", "If-None-Match"],
      ["PATCH", "If-Match"],
    ] as const) {
      const res = await api(
        method,
        `/accounts/${created.body.data.id}`,
        method === "PATCH" ? { name: "x" } : undefined,
        {
          [name]: tags,
        },
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: "bad_request",
        details: [{ path: [name], message: "must be at most 8192 characters" }],
      });
    }
    expect((await api("GET", `/accounts/${created.body.data.id}`)).body.data.name).toBe("Long condition");
  });
});

describe("IETF rate-limit headers", () => {
  it("sends RateLimit-Policy and RateLimit on every answer, 429 included", async () => {
    const org = await createTestOrg(undefined, { limits: { perKey: 2, perOrg: 5 } });
    const limited = client(server.url, org.key);
    const ok = await limited("GET", "/accounts");
    expect(ok.headers.get("ratelimit-policy")).toBe('"key";q=2;w=60, "org";q=5;w=60');
    expect(ok.headers.get("ratelimit")).toMatch(/^"key";r=1;t=\d+$/);
    await limited("GET", "/accounts");
    const refused = await limited("GET", "/accounts");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit")).toMatch(/^"key";r=0;t=([1-9]|[1-5]\d|60)$/);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const anonymous = await client(server.url)("GET", "/accounts");
    expect(anonymous.headers.get("ratelimit-policy")).toMatch(/^"ip";q=\d+;w=60$/);
  });
});
