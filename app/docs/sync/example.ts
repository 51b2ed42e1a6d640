/**
 * The complete, runnable TypeScript example of the "Keeping a copy in sync" guide, shown on /docs/sync and
 * in docs/api-contract.md §6.8, and run as written by test/integration/platform/sync-guide.test.ts against a live server. Plain `fetch`, no
 * dependency; Node 22 or later (`npx tsx sync.ts`).
 */
export const SYNC_EXAMPLE = `// sync.ts: keeps a local copy of every record of your organisation, with no gaps.
// CRM_URL (default http://localhost:3000/api/v1) and CRM_KEY (a key with admin:read, or the read scopes you need
// plus events:read). ONCE=1 stops after catching up instead of polling every 5 seconds.
const BASE = process.env.CRM_URL ?? "http://localhost:3000/api/v1";
const KEY = process.env.CRM_KEY ?? "";
const LISTS = {
  account: "accounts", contact: "contacts", deal: "deals", device: "devices",
  task: "tasks", note: "notes", touchpoint: "touchpoints",
} as const;
type Resource = keyof typeof LISTS;
type Row = { id: string; deleted?: true; [field: string]: unknown };

// Your copy: one map per resource, and the sequence of the event each record was last set from. Replace with your
// database.
const copy = new Map<Resource, Map<string, Row>>();
for (const resource of Object.keys(LISTS) as Resource[]) copy.set(resource, new Map());
const applied = new Map<string, number>();

async function get(path: string): Promise<{ status: number; body: any }> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(BASE + path, { headers: { Authorization: "Bearer " + KEY } });
    if (res.status === 429 && attempt < 5) {
      await new Promise((r) => setTimeout(r, Number(res.headers.get("Retry-After") ?? 1) * 1000));
      continue;
    }
    return { status: res.status, body: await res.json() };
  }
}

// 1. The full list of every resource, page by page.
async function listEverything(): Promise<void> {
  applied.clear();
  for (const [resource, path] of Object.entries(LISTS) as [Resource, string][]) {
    const records = copy.get(resource)!;
    records.clear();
    let cursor = "";
    for (;;) {
      const { status, body } = await get("/" + path + "?limit=100" + (cursor ? "&cursor=" + cursor : ""));
      if (status !== 200) throw new Error(path + ": " + status + " " + JSON.stringify(body.error));
      for (const row of body.data) records.set(row.id, row);
      if (!body.hasMore) break;
      cursor = body.nextCursor;
    }
  }
}

// Applies one event; call it from your webhook receiver too. Events of a record arrive here in commit order from the
// feed, but webhook retries can deliver an older one late: its smaller sequence says so, and it is skipped.
function apply(event: { sequence: number; resource: Resource; data: Row }): boolean {
  const key = event.resource + ":" + event.data.id;
  if ((applied.get(key) ?? 0) >= event.sequence) return false;
  applied.set(key, event.sequence);
  const records = copy.get(event.resource)!;
  if (event.data.deleted === true) records.delete(event.data.id); // a tombstone: the record is gone
  else records.set(event.data.id, event.data); // the record as its GET returns it now
  return true;
}

// 2. The events feed from its start, then from where it stopped: apply each event in order (commit order).
let feedCursor: string | null = null;
async function followFeed(): Promise<number> {
  let count = 0;
  for (;;) {
    const { status, body } = await get("/events?limit=100" + (feedCursor ? "&cursor=" + feedCursor : ""));
    if (status === 410) {
      // The cursor is older than the feed's retention (30 days): start again from a full list.
      feedCursor = null;
      await listEverything();
      continue;
    }
    if (status !== 200) throw new Error("events: " + status + " " + JSON.stringify(body.error));
    for (const event of body.data) if (apply(event)) count++;
    if (body.nextCursor) feedCursor = body.nextCursor; // keep it (in your database) to continue later
    if (!body.hasMore) return count;
  }
}

async function main(): Promise<void> {
  await listEverything();
  await followFeed(); // replays the retained events over the list: older states are overwritten by newer ones
  const counts = () => [...copy].map(([resource, records]) => resource + "=" + records.size).join(" ");
  console.log("in sync:", counts());
  while (!process.env.ONCE) {
    await new Promise((r) => setTimeout(r, 5000));
    const changed = await followFeed();
    if (changed > 0) console.log("applied", changed, "events:", counts());
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;
