// Tasks (docs/api-contract.md §2.7, §3, §4.5): endpoints, validation, links to accounts and deals, the DONE ⇄
// completedAt rule, lists, hard delete and organisation isolation, over real HTTP against the real database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prisma } from "../../../server/db/transaction";
import { client, createKey, createTestOrg, expectKeysetPaging, startApi, type TestServer } from "../../helpers/api";

let server: TestServer;
let api: ReturnType<typeof client>;
let orgId: string;
let accountId: string;
let otherAccountId: string;
let dealId: string;

type TaskBody = Record<string, unknown> & { id: string; updatedAt: string; completedAt: string | null };

beforeAll(async () => {
  server = await startApi();
  const org = await createTestOrg();
  orgId = org.orgId;
  api = client(server.url, org.key);
  accountId = (await api("POST", "/accounts", { name: "Task Account" })).body.data.id;
  otherAccountId = (await api("POST", "/accounts", { name: "Other Account" })).body.data.id;
  dealId = (await api("POST", "/deals", { name: "Task Deal", accountId })).body.data.id;
});
afterAll(() => server.close());

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function newTask(body: Record<string, unknown> = {}): Promise<TaskBody> {
  const res = await api("POST", "/tasks", { title: "Call back", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function patch(id: string, body: Record<string, unknown>): Promise<TaskBody> {
  const res = await api("PATCH", `/tasks/${id}`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe("POST /tasks", () => {
  it("creates a task with 201, defaults and the row", async () => {
    const res = await api("POST", "/tasks", { title: "  Renewal review " });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const task = res.body.data;
    expect(task).toEqual({
      id: expect.any(String),
      title: "Renewal review",
      description: null,
      status: "TODO",
      priority: "MEDIUM",
      dueAt: null,
      assigneeId: null,
      accountId: null,
      dealId: null,
      completedAt: null,
      customFields: {},
      createdAt: expect.stringMatching(ISO_MS),
      updatedAt: task.createdAt,
    });
    expect(await prisma().task.findUnique({ where: { id: task.id } })).toMatchObject({
      orgId,
      title: "Renewal review",
      status: "TODO",
      priority: "MEDIUM",
    });
    expect((await api("GET", `/tasks/${task.id}`)).body.data).toEqual(task);
  });

  it("accepts every field, returns dueAt in UTC and links the account and its deal", async () => {
    const task = await newTask({
      title: "QBR prep",
      description: "Slides and numbers",
      status: "IN_PROGRESS",
      priority: "URGENT",
      dueAt: "2026-12-01T09:30:00+02:00",
      assigneeId: "user-9",
      accountId,
      dealId,
    });
    expect(task).toMatchObject({
      description: "Slides and numbers",
      status: "IN_PROGRESS",
      priority: "URGENT",
      dueAt: "2026-12-01T07:30:00.000Z",
      assigneeId: "user-9",
      accountId,
      dealId,
      completedAt: null,
    });
    const dealOnly = await newTask({ dealId });
    expect(dealOnly).toMatchObject({ dealId, accountId: null });
    const accountOnly = await newTask({ accountId: otherAccountId });
    expect(accountOnly).toMatchObject({ accountId: otherAccountId, dealId: null });
  });

  it("stamps completedAt on a task created as DONE", async () => {
    const before = Date.now();
    const task = await newTask({ status: "DONE" });
    expect(Date.parse(task.completedAt ?? "")).toBeGreaterThanOrEqual(before - 1000);
    expect(task.completedAt).toBe(task.createdAt);
  });

  it("refuses missing, unknown, read-only and malformed fields with 422 details", async () => {
    const res = await api("POST", "/tasks", {
      colour: "red",
      completedAt: "2026-01-01T00:00:00.000Z",
      status: "FINISHED",
      priority: "CRITICAL",
      dueAt: "2026-12-01T09:30:00",
      accountId: "bad id!",
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("validation_error");
    const paths = res.body.error.details.map((d: { path: string[] }) => d.path.join("."));
    expect(paths).toEqual(
      expect.arrayContaining(["title", "colour", "completedAt", "status", "priority", "dueAt", "accountId"]),
    );
    for (const body of [{ title: " " }, { title: "x", dueAt: "tomorrow" }, { title: "x", assigneeId: 7 }]) {
      const bad = await api("POST", "/tasks", body);
      expect(bad.status, JSON.stringify(body)).toBe(422);
      expect(bad.body.error.details).toHaveLength(1);
    }
  });

  it("refuses links that name nothing in the organisation or a deal of another account, writing nothing", async () => {
    const count = () => prisma().task.count({ where: { orgId } });
    const before = await count();
    const missing = await api("POST", "/tasks", {
      title: "x",
      accountId: "nosuchaccount123",
      dealId: "nosuchdeal123",
    });
    expect(missing.status).toBe(422);
    expect(missing.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
      { path: ["dealId"], message: "no deal with this id in the organisation" },
    ]);
    const mismatch = await api("POST", "/tasks", { title: "x", accountId: otherAccountId, dealId });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.error.details).toEqual([
      { path: ["dealId"], message: "the deal belongs to another account than the task's accountId" },
    ]);
    expect(await count()).toBe(before);
  });

  it("needs tasks:write (tasks:read is 403) and a key", async () => {
    const reader = client(server.url, await createKey(orgId, ["tasks:read"]));
    const task = await newTask();
    for (const [method, path, body] of [
      ["POST", "/tasks", { title: "Nope" }],
      ["PATCH", `/tasks/${task.id}`, { status: "DONE" }],
      ["DELETE", `/tasks/${task.id}`, undefined],
    ] as const) {
      const res = await reader(method, path, body);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("insufficient_scope");
    }
    expect((await reader("GET", `/tasks/${task.id}`)).status).toBe(200);
    expect((await client(server.url)("GET", "/tasks")).status).toBe(401);
    const dealsOnly = client(server.url, await createKey(orgId, ["deals:write"]));
    expect((await dealsOnly("GET", "/tasks")).status).toBe(403);
  });
});

describe("GET /tasks/{id}", () => {
  it("answers 404 for an unknown id and 400 for a malformed one", async () => {
    const missing = await api("GET", "/tasks/doesnotexist123");
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const malformed = await api("GET", "/tasks/bad%20id!");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("bad_request");
    expect((await api("PATCH", "/tasks/doesnotexist123", { title: "x" })).status).toBe(404);
    expect((await api("DELETE", "/tasks/doesnotexist123")).status).toBe(404);
  });
});

describe("PATCH /tasks/{id}", () => {
  it("stamps completedAt when the status becomes DONE and clears it when it leaves DONE (docs/api-contract.md §3)", async () => {
    const task = await newTask({ status: "WAITING" });
    await tick();
    const done = await patch(task.id, { status: "DONE" });
    expect(done.status).toBe("DONE");
    expect(done.completedAt).toBe(done.updatedAt);
    expect(Date.parse(done.completedAt ?? "")).toBeGreaterThan(Date.parse(task.createdAt as string));
    expect((await prisma().task.findUnique({ where: { id: task.id } }))?.completedAt?.toISOString()).toBe(
      done.completedAt,
    );
    await tick();
    const again = await patch(task.id, { status: "DONE", title: "Call back" });
    expect(again).toEqual(done);
    const reopened = await patch(task.id, { status: "IN_PROGRESS" });
    expect(reopened).toMatchObject({ status: "IN_PROGRESS", completedAt: null });
    const cancelled = await patch(task.id, { status: "CANCELLED" });
    expect(cancelled.completedAt).toBeNull();
    await tick();
    const redone = await patch(task.id, { status: "DONE" });
    expect(Date.parse(redone.completedAt ?? "")).toBeGreaterThan(Date.parse(done.completedAt ?? ""));
  });

  it("updates fields, clears them with null, and changes nothing on a no-op", async () => {
    const task = await newTask({ description: "d", dueAt: "2026-10-01T10:00:00Z", assigneeId: "a", priority: "LOW" });
    await tick();
    const edited = await patch(task.id, { title: "Edited", description: null, dueAt: null, priority: "HIGH" });
    expect(edited).toMatchObject({
      title: "Edited",
      description: null,
      dueAt: null,
      priority: "HIGH",
      assigneeId: "a",
    });
    expect(Date.parse(edited.updatedAt)).toBeGreaterThan(Date.parse(task.updatedAt));
    const due = await patch(task.id, { dueAt: "2026-10-01T12:00:00+02:00" });
    expect(due.dueAt).toBe("2026-10-01T10:00:00.000Z");
    await tick();
    const noop = await patch(task.id, { title: "Edited", dueAt: "2026-10-01T10:00:00.000Z", description: null });
    expect(noop).toEqual(due);
    expect(await patch(task.id, {})).toEqual(due);
    const readOnly = await api("PATCH", `/tasks/${task.id}`, { completedAt: null });
    expect(readOnly.status).toBe(422);
    expect(readOnly.body.error.details[0].path).toEqual(["completedAt"]);
  });

  it("checks changed links against the values the task will have", async () => {
    const task = await newTask({ accountId, dealId });
    const moveAccount = await api("PATCH", `/tasks/${task.id}`, { accountId: otherAccountId });
    expect(moveAccount.status).toBe(422);
    expect(moveAccount.body.error.details).toEqual([
      { path: ["accountId"], message: "the deal belongs to another account than the task's accountId" },
    ]);
    const foreignDeal = await api("PATCH", `/tasks/${task.id}`, { dealId: "nosuchdeal123" });
    expect(foreignDeal.status).toBe(422);
    expect(foreignDeal.body.error.details[0].path).toEqual(["dealId"]);
    expect((await api("GET", `/tasks/${task.id}`)).body.data).toEqual(task);

    const moved = await patch(task.id, { accountId: otherAccountId, dealId: null });
    expect(moved).toMatchObject({ accountId: otherAccountId, dealId: null });
    const relinked = await api("PATCH", `/tasks/${task.id}`, { dealId });
    expect(relinked.status).toBe(422);
    expect(relinked.body.error.details[0].path).toEqual(["dealId"]);
    expect(await patch(task.id, { accountId: null, dealId })).toMatchObject({ accountId: null, dealId });
  });

  it("records task.created, task.updated and task.deleted for the events feed", async () => {
    const org = await createTestOrg();
    const own = client(server.url, org.key);
    const task = (await own("POST", "/tasks", { title: "Quiet" })).body.data;
    await own("PATCH", `/tasks/${task.id}`, { status: "DONE" });
    await own("DELETE", `/tasks/${task.id}`);
    const events = await prisma().event.findMany({ where: { orgId: org.orgId }, orderBy: { sequence: "asc" } });
    expect(events.map((event) => event.name)).toEqual(["task.created", "task.updated", "task.deleted"]);
    expect(events[2]?.data).toEqual({ id: task.id, resource: "task", deleted: true });
  });
});

describe("DELETE /tasks/{id}", () => {
  it("removes the task for good and answers {id, deleted: true}", async () => {
    const task = await newTask({ accountId, dealId });
    const res = await api("DELETE", `/tasks/${task.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: task.id, deleted: true });
    expect(await prisma().task.count({ where: { id: task.id } })).toBe(0);
    expect((await api("GET", `/tasks/${task.id}`)).status).toBe(404);
    expect((await api("DELETE", `/tasks/${task.id}`)).status).toBe(404);
    expect((await api("GET", `/deals/${dealId}`)).status).toBe(200);
  });

  it("keeps tasks, unlinked, when their account is hard-deleted", async () => {
    const acc = (await api("POST", "/accounts", { name: "Doomed" })).body.data.id;
    const deal = (await api("POST", "/deals", { name: "Doomed deal", accountId: acc })).body.data.id;
    const task = await newTask({ accountId: acc, dealId: deal });
    expect((await api("DELETE", `/accounts/${acc}?force=true`)).status).toBe(200);
    expect((await api("GET", `/tasks/${task.id}`)).body.data).toMatchObject({ accountId: null, dealId: null });
  });
});

describe("GET /tasks", () => {
  let list: ReturnType<typeof client>;
  let acc1: string;
  let deal1: string;
  const titles = (res: { body: { data: Array<{ title: string }> } }) => res.body.data.map((task) => task.title);

  beforeAll(async () => {
    const org = await createTestOrg();
    list = client(server.url, org.key);
    acc1 = (await list("POST", "/accounts", { name: "One" })).body.data.id;
    deal1 = (await list("POST", "/deals", { name: "Deal", accountId: acc1 })).body.data.id;
    const tasks = [
      { title: "T1", status: "TODO", assigneeId: "ann", dueAt: "2026-03-01T00:00:00Z", accountId: acc1 },
      { title: "T2", status: "DONE", assigneeId: "bob", accountId: acc1, dealId: deal1 },
      { title: "T3", status: "TODO", dueAt: "2026-01-01T00:00:00Z", dealId: deal1 },
      { title: "T4", status: "WAITING", assigneeId: "ann", dueAt: "2026-02-01T00:00:00Z" },
      { title: "T5", status: "TODO" },
    ];
    for (const task of tasks) expect((await list("POST", "/tasks", task)).status).toBe(201);
  });

  it("lists in creation order by default with the list envelope", async () => {
    const res = await list("GET", "/tasks");
    expect(res.status).toBe(200);
    expect(titles(res)).toEqual(["T1", "T2", "T3", "T4", "T5"]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.nextCursor).toBe(res.body.data[4].id);
  });

  it("filters by status, assigneeId, accountId and dealId, combined with AND", async () => {
    expect(titles(await list("GET", "/tasks?status=TODO"))).toEqual(["T1", "T3", "T5"]);
    expect(titles(await list("GET", "/tasks?assigneeId=ann"))).toEqual(["T1", "T4"]);
    expect(titles(await list("GET", `/tasks?accountId=${acc1}`))).toEqual(["T1", "T2"]);
    expect(titles(await list("GET", `/tasks?dealId=${deal1}`))).toEqual(["T2", "T3"]);
    expect(titles(await list("GET", `/tasks?dealId=${deal1}&status=TODO`))).toEqual(["T3"]);
    expect(titles(await list("GET", "/tasks?status=DONE&assigneeId=ann"))).toEqual([]);
    expect((await list("GET", "/tasks?status=FINISHED")).status).toBe(422);
    const unknown = await list("GET", "/tasks?priority=HIGH");
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details[0].path).toEqual(["priority"]);
  });

  it("sorts by dueAt (nulls last both ways), createdAt and updatedAt, ignoring other fields or, when strict, refusing them", async () => {
    expect(titles(await list("GET", "/tasks?sort=dueAt:asc,createdAt:asc"))).toEqual(["T3", "T4", "T1", "T2", "T5"]);
    expect(titles(await list("GET", "/tasks?sort=dueAt:desc,createdAt:asc"))).toEqual(["T1", "T4", "T3", "T2", "T5"]);
    expect(titles(await list("GET", "/tasks?sort=createdAt:desc"))).toEqual(["T5", "T4", "T3", "T2", "T1"]);
    // Ignored (the default order applies and the answer names it), or refused when the request asks for strict.
    const ignored = await list("GET", "/tasks?sort=priority:desc");
    expect(titles(ignored)).toEqual(titles(await list("GET", "/tasks")));
    expect(ignored.headers.get("sort-ignored")).toBe('"priority:desc"');
    expect((await list("GET", "/tasks?sort=priority:desc", undefined, { Prefer: "handling=strict" })).status).toBe(422);
    const t3 = (await list("GET", "/tasks")).body.data[2];
    await list("PATCH", `/tasks/${t3.id}`, { priority: "HIGH" });
    expect(titles(await list("GET", "/tasks?sort=updatedAt:desc")).at(0)).toBe("T3");
    expect(titles(await list("GET", "/tasks?sort=updatedAt:asc")).at(-1)).toBe("T3");
  });

  it("pages with limit and cursor under every sort, without gaps or repeats", async () => {
    await expectKeysetPaging(list, "/tasks", ["", "dueAt:asc", "dueAt:desc", "createdAt:desc", "updatedAt:asc"]);
    expect((await list("GET", "/tasks?limit=101")).status).toBe(422);
    expect((await list("GET", "/tasks?limit=0")).status).toBe(422);
    const cursor = await list("GET", "/tasks?cursor=nosuchrecord");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe("bad_request");
  });

  it("returns only tasks updated after updatedAfter", async () => {
    const all = (await list("GET", "/tasks")).body.data;
    const mark = new Date().toISOString();
    await tick();
    await list("PATCH", `/tasks/${all[4].id}`, { status: "DONE" });
    const res = await list("GET", `/tasks?updatedAfter=${encodeURIComponent(mark)}`);
    expect(res.body.data.map((t: { id: string }) => t.id)).toEqual([all[4].id]);
    expect(res.body.data[0].completedAt).not.toBeNull();
    expect((await list("GET", "/tasks?updatedAfter=yesterday")).status).toBe(422);
  });
});

describe("organisation isolation (docs/api-contract.md §1)", () => {
  it("gives another organisation 404 on get, patch and delete, hides the tasks and refuses its links", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const apiA = client(server.url, a.key);
    const apiB = client(server.url, b.key);
    const accA = (await apiA("POST", "/accounts", { name: "A's" })).body.data.id;
    const dealA = (await apiA("POST", "/deals", { name: "A's deal", accountId: accA })).body.data.id;
    const task = (await apiA("POST", "/tasks", { title: "Secret", accountId: accA, dealId: dealA })).body.data;

    for (const [method, path, body] of [
      ["GET", `/tasks/${task.id}`, undefined],
      ["PATCH", `/tasks/${task.id}`, { status: "DONE" }],
      ["DELETE", `/tasks/${task.id}`, undefined],
    ] as const) {
      const res = await apiB(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    expect((await apiB("GET", "/tasks")).body.data).toEqual([]);
    expect((await apiB("GET", `/tasks?dealId=${dealA}`)).body.data).toEqual([]);
    expect((await apiB("GET", `/tasks?cursor=${task.id}`)).status).toBe(400);

    const steal = await apiB("POST", "/tasks", { title: "Steal", accountId: accA, dealId: dealA });
    expect(steal.status).toBe(422);
    expect(steal.body.error.details).toEqual([
      { path: ["accountId"], message: "no account with this id in the organisation" },
      { path: ["dealId"], message: "no deal with this id in the organisation" },
    ]);
    const own = (await apiB("POST", "/tasks", { title: "Own" })).body.data;
    expect((await apiB("PATCH", `/tasks/${own.id}`, { dealId: dealA })).status).toBe(422);
    expect((await apiB("PATCH", `/tasks/${own.id}`, { accountId: accA })).status).toBe(422);
    expect(await prisma().task.count({ where: { orgId: b.orgId } })).toBe(1);
    expect((await apiA("GET", `/tasks/${task.id}`)).body.data).toEqual(task);
  });
});
