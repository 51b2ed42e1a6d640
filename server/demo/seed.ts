import { newId } from "../db/ids";
import { prisma, transaction } from "../db/transaction";
import type { EventName } from "../platform/events-feed/schema";
import { bulkUpsertAccounts } from "../records/accounts/service";
import { bulkUpsertContacts } from "../records/contacts/service";
import { bulkCreateDeals } from "../records/deals/service";
import { insertDevices } from "../records/devices/service";
import { recordEvents, SEED_ORIGIN } from "../records/events";
import { SIGNAL_DEFAULT_TTL_DAYS } from "../records/health/model";
import { refreshHealthScores } from "../records/health/refresh";
import { insertNotes } from "../records/notes/service";
import { insertTasks } from "../records/tasks/service";
import { insertTouchpoints } from "../records/touchpoints/service";

/** How much a demo book holds. */
export const DEMO_BOOK = {
  accounts: 200,
  contacts: 1_000,
  deals: 400,
  devices: 5_000,
  tasks: 300,
  notes: 200,
  touchpoints: 900,
  signals: 40,
};

const DAY_MS = 86_400_000;

// A seeded generator, so every demo book is the same and tests and screenshots are reproducible.
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    chance: (p: number) => next() < p,
  };
}

const PREFIXES = [
  "Northwind",
  "Harbor",
  "Cedar",
  "Summit",
  "Bluewater",
  "Granite",
  "Maple",
  "Ironwood",
  "Lakeside",
  "Redstone",
  "Silverline",
  "Oakridge",
  "Pinecrest",
  "Riverbend",
  "Stonegate",
  "Westfield",
  "Brightpath",
  "Clearview",
  "Eastgate",
  "Foxglove",
];
const SUFFIXES = [
  "Dental",
  "Logistics",
  "Legal",
  "Manufacturing",
  "Schools",
  "Accounting",
  "Clinic",
  "Realty",
  "Engineering",
  "Insurance",
];
const INDUSTRIES: Record<string, string> = {
  Dental: "Healthcare",
  Clinic: "Healthcare",
  Logistics: "Logistics",
  Legal: "Legal",
  Manufacturing: "Manufacturing",
  Schools: "Education",
  Accounting: "Financial services",
  Insurance: "Financial services",
  Realty: "Real estate",
  Engineering: "Engineering",
};
const FIRST = [
  "Ava",
  "Ben",
  "Chloe",
  "Dan",
  "Ella",
  "Finn",
  "Grace",
  "Hugo",
  "Isla",
  "Jack",
  "Kara",
  "Liam",
  "Maya",
  "Noah",
  "Olivia",
  "Priya",
  "Quinn",
  "Ravi",
  "Sara",
  "Tom",
];
const LAST = [
  "Smith",
  "Jones",
  "Patel",
  "Garcia",
  "Kim",
  "Nguyen",
  "Brown",
  "Müller",
  "Rossi",
  "Okafor",
  "Silva",
  "Cohen",
  "Larsen",
  "Dubois",
  "Tanaka",
];
const TITLES = [
  "Office Manager",
  "Owner",
  "IT Lead",
  "Operations Director",
  "CFO",
  "Practice Manager",
  "Managing Partner",
];
const CATEGORIES = ["Managed Services", "Security", "Backup & DR", "Cloud", "Microsoft 365", "VoIP"];
const STAGES = [
  "QUALIFICATION",
  "DISCOVERY",
  "PROPOSAL",
  "NEGOTIATION",
  "CLOSED_WON",
  "CLOSED_WON",
  "CLOSED_WON",
  "CLOSED_LOST",
] as const;
const STAGE_PROBABILITY = {
  QUALIFICATION: 10,
  DISCOVERY: 25,
  PROPOSAL: 50,
  NEGOTIATION: 75,
  CLOSED_WON: 100,
  CLOSED_LOST: 0,
} as const;
const DEVICE_TYPES = [
  ["Workstation", "Windows 11 Pro"],
  ["Laptop", "Windows 11 Pro"],
  ["Laptop", "macOS 15"],
  ["Server", "Windows Server 2022"],
  ["Server", "Ubuntu 24.04"],
  ["Firewall", "FortiOS 7.4"],
  ["Switch", "Cisco IOS 17"],
] as const;

/**
 * Inserts `rows` into `table` with one statement (`jsonb_to_recordset`; `columns` maps each column to its SQL type,
 * `timestamptz` for ISO 8601 strings, stored as UTC like every timestamp of the schema), stamping `id`, `orgId`,
 * `createdAt` and `updatedAt`, and returns the inserted rows with the `returning` columns. Joins the enclosing
 * transaction, if any.
 */
function insertRows<T>(
  table: string,
  orgId: string,
  now: Date,
  columns: Record<string, string>,
  rows: readonly Record<string, unknown>[],
  returning: readonly string[],
): Promise<T[]> {
  const names = Object.keys(columns).map((name) => `"${name}"`);
  const definitions = Object.entries(columns).map(([name, type]) => `"${name}" ${type}`);
  const values = Object.entries(columns).map(([name, type]) =>
    type === "timestamptz" ? `r."${name}" AT TIME ZONE 'UTC'` : `r."${name}"`,
  );
  return prisma().$queryRawUnsafe<T[]>(
    `INSERT INTO "${table}" ("id", "orgId", ${names.join(", ")}, "createdAt", "updatedAt")
     SELECT r."id", $1, ${values.join(", ")},
            $2::timestamptz AT TIME ZONE 'UTC', $2::timestamptz AT TIME ZONE 'UTC'
     FROM jsonb_to_recordset($3::jsonb) AS r("id" text, ${definitions.join(", ")})
     RETURNING ${returning.map((name) => `"${name}"`).join(", ")}`,
    orgId,
    now.toISOString(),
    JSON.stringify(rows.map((row) => ({ ...row, id: newId() }))),
  );
}

/**
 * Creates records with `insert` (a resource's own insert, as its create endpoint uses it) and records one `event` per
 * created record, carrying it as its GET returns it, in one transaction with the seed's origin: recorded, never handed
 * to webhooks.
 * @returns the created records.
 */
function createWithEvents<T extends { id: string }>(
  orgId: string,
  event: EventName,
  insert: () => Promise<T[]>,
): Promise<T[]> {
  return transaction(async (tx) => {
    const created = await insert();
    await recordEvents(
      tx,
      orgId,
      SEED_ORIGIN,
      created.map((record) => ({ name: event, data: record })),
    );
    return created;
  });
}

/** Devices per transaction: 5,000 with their events in one would hold the events feed back for seconds. */
const DEVICE_BATCH = 1_000;

/**
 * Fills an organisation with a realistic MSP book: 200 accounts, 1,000 contacts, 400 deals across stages and service
 * categories, 5,000 devices, 300 tasks, 200 notes, 900 touchpoints over the last 90 days, 40 external signals, plus
 * contracts and leads (no endpoints) and 90 days of health-score history, with every account's current score stored.
 * Set-based (docs/architecture.md, "Data and migrations"): one statement per table (accounts, contacts and deals through
 * the bulk upserts the API uses; devices 1,000 at a time), each in a short transaction with its events, since the
 * events feed holds back every event recorded after the oldest transaction still open. Every write records its event
 * as the API would (`account.created`, `task.created`, …), with the seed's origin: recorded, never handed to webhooks.
 * Deterministic for a given organisation, apart from ids and timestamps.
 * @returns counts of what was created, or `{ skipped: true }` when the organisation already has deals (a seeded book).
 */
export async function seedDemoBook(orgId: string): Promise<Record<string, number> | { skipped: true }> {
  if ((await prisma().deal.count({ where: { orgId } })) > 0) return { skipped: true };
  const rng = random(42);
  const now = Date.now();
  const at = new Date(now);

  const accountItems = Array.from({ length: DEMO_BOOK.accounts }, (_, i) => {
    const suffix = SUFFIXES[i % SUFFIXES.length] as string;
    const name = `${PREFIXES[Math.floor(i / SUFFIXES.length) % PREFIXES.length]} ${suffix}${i >= 200 ? ` ${i}` : ""}`;
    const roll = rng.next();
    const lifecycleStatus = roll < 0.6 ? "ACTIVE" : roll < 0.75 ? "PROSPECT" : roll < 0.9 ? "AT_RISK" : "CHURNED";
    return {
      name,
      industry: INDUSTRIES[suffix] ?? "Professional services",
      employeeCount: rng.int(5, 500),
      lifecycleStatus: lifecycleStatus as "ACTIVE" | "PROSPECT" | "AT_RISK" | "CHURNED",
      domain: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.example`,
      externalId: `demo-acct-${i + 1}`,
    };
  });
  const accounts = await bulkUpsertAccounts(orgId, accountItems, SEED_ORIGIN);
  const accountIds = accounts.results.map((result) => result.id);

  const contactItems = Array.from({ length: DEMO_BOOK.contacts }, (_, i) => {
    const first = rng.pick(FIRST);
    const last = rng.pick(LAST);
    return {
      email: `${first}.${last}.${i + 1}@${accountItems[i % DEMO_BOOK.accounts]?.domain}`.toLowerCase(),
      firstName: first,
      lastName: last,
      title: rng.pick(TITLES),
      phone: `+1-555-${String(1000 + i).padStart(4, "0")}`,
      accountId: accountIds[i % DEMO_BOOK.accounts] as string,
      role: i < DEMO_BOOK.accounts ? "Primary contact" : "Staff",
      isPrimary: i < DEMO_BOOK.accounts,
    };
  });
  const contactIds = (await bulkUpsertContacts(orgId, contactItems, SEED_ORIGIN)).results.map((r) => r.id);

  const dealItems = Array.from({ length: DEMO_BOOK.deals }, (_, i) => {
    const stage = rng.pick(STAGES);
    const close = new Date(now + rng.int(-60, 90) * DAY_MS).toISOString().slice(0, 10);
    return {
      name: `${rng.pick(CATEGORIES)} ${rng.pick(["agreement", "expansion", "renewal", "project"])}`,
      accountId: accountIds[i % DEMO_BOOK.accounts] as string,
      estimatedMrr: rng.int(20, 800) * 10,
      probability: STAGE_PROBABILITY[stage],
      stage,
      type: rng.pick(["NEW_BUSINESS", "UPSELL", "RENEWAL"] as const),
      serviceCategory: rng.pick(CATEGORIES),
      ownerId: `user-${rng.int(1, 6)}`,
      expectedCloseDate: close,
    };
  });
  const dealIds = (await bulkCreateDeals(orgId, dealItems, SEED_ORIGIN)).results.map((result) => result.id);

  const deviceItems = Array.from({ length: DEMO_BOOK.devices }, (_, i) => {
    const [deviceType, os] = rng.pick(DEVICE_TYPES);
    const account = i % DEMO_BOOK.accounts;
    return {
      rmmAgentId: `demo-agent-${i + 1}`,
      accountId: accountIds[account] as string,
      hostname: `${deviceType.slice(0, 3).toUpperCase()}-${String(account + 1).padStart(3, "0")}-${String(Math.floor(i / DEMO_BOOK.accounts) + 1).padStart(2, "0")}`,
      deviceType,
      os,
      isOnline: rng.chance(0.92),
      isEndOfLife: rng.chance(0.06),
      patchCompliant: rng.chance(0.88),
      lastSeenAt: new Date(now - rng.int(0, 72 * 60) * 60_000).toISOString(),
    };
  });
  let devices = 0;
  for (let start = 0; start < deviceItems.length; start += DEVICE_BATCH) {
    const batch = deviceItems.slice(start, start + DEVICE_BATCH);
    devices += (await createWithEvents(orgId, "device.created", () => insertDevices(orgId, batch, at))).length;
  }

  const taskRows = Array.from({ length: DEMO_BOOK.tasks }, () => {
    const account = rng.int(0, DEMO_BOOK.accounts - 1);
    const status = rng.pick(["TODO", "TODO", "IN_PROGRESS", "WAITING", "DONE", "CANCELLED"] as const);
    return {
      title: rng.pick([
        "Quarterly business review prep",
        "Replace end-of-life firewall",
        "Renewal call",
        "Patch exceptions review",
        "Onboard new hire",
        "Backup restore test",
      ]),
      status,
      priority: rng.pick(["LOW", "MEDIUM", "MEDIUM", "HIGH", "URGENT"] as const),
      dueAt: new Date(now + rng.int(-30, 45) * DAY_MS).toISOString(),
      assigneeId: `user-${rng.int(1, 6)}`,
      accountId: accountIds[account],
    };
  });
  const tasks = await createWithEvents(orgId, "task.created", () => insertTasks(orgId, taskRows, at));

  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const contracts = await insertRows<{ id: string }>(
    "Contract",
    orgId,
    at,
    { accountId: "text", name: "text", mrr: "numeric", startDate: "date", endDate: "date" },
    accountIds.slice(0, 150).map((accountId, i) => ({
      accountId,
      name: `${rng.pick(CATEGORIES)} agreement`,
      mrr: rng.int(50, 600) * 10,
      startDate: day(now - rng.int(60, 900) * DAY_MS),
      endDate: i % 3 === 0 ? day(now + rng.int(30, 365) * DAY_MS) : null,
    })),
    ["id"],
  );
  const contractIds = contracts.map((contract) => contract.id);
  const leads = await insertRows<{ id: string }>(
    "Lead",
    orgId,
    at,
    { company: "text", email: "text", icpScore: "int" },
    Array.from({ length: 60 }, (_, i) => ({
      company: `${rng.pick(PREFIXES)} ${rng.pick(SUFFIXES)} (lead ${i + 1})`,
      email: `contact${i + 1}@lead.example`,
      icpScore: rng.int(10, 95),
    })),
    ["id"],
  );
  const leadIds = leads.map((lead) => lead.id);

  const noteTargets = [
    ["Account", accountIds],
    ["Deal", dealIds],
    ["Contract", contractIds],
    ["Lead", leadIds],
  ] as const;
  const noteRows = Array.from({ length: DEMO_BOOK.notes }, (_, i) => {
    const [objectType, ids] = noteTargets[i % noteTargets.length] as (typeof noteTargets)[number];
    return {
      objectType,
      objectId: rng.pick(ids),
      body: rng.pick([
        "Discussed renewal timeline; wants a security review first.",
        "Asked for a quote on additional seats.",
        "Escalated slow VPN; resolved by ISP.",
        "Prefers email over calls.",
        "Budget approved for next quarter.",
      ]),
      authorId: `user-${rng.int(1, 6)}`,
    };
  });
  const notes = await createWithEvents(orgId, "note.created", () => insertNotes(orgId, noteRows, at));

  // Most accounts hear from us often; a tail goes quiet, which the engagement signal should show.
  const touchpointRows = Array.from({ length: DEMO_BOOK.touchpoints }, () => {
    const account = rng.chance(0.8) ? rng.int(0, 159) : rng.int(160, DEMO_BOOK.accounts - 1);
    return {
      accountId: accountIds[account] as string,
      contactId: contactIds[account] ?? null,
      type: rng.pick(["EMAIL", "CALL", "MEETING", "QBR", "SITE_VISIT", "TICKET", "CHAT"] as const),
      direction: rng.pick(["INBOUND", "OUTBOUND", "OUTBOUND", "INTERNAL"] as const),
      subject: rng.pick([
        "Monthly check-in",
        "Ticket follow-up",
        "QBR",
        "Renewal discussion",
        "Security awareness training",
      ]),
      notes: "Logged by the demo seed.",
      occurredAt: new Date(now - rng.int(0, 89 * 24) * 3_600_000).toISOString(),
    };
  });
  const touchpoints = await createWithEvents(orgId, "touchpoint.created", () =>
    insertTouchpoints(orgId, touchpointRows, at),
  );

  // Signals as a push stores them (expiring 30 days after they occurred); no event exists for them.
  await prisma().healthSignal.createMany({
    data: Array.from({ length: DEMO_BOOK.signals }, () => {
      const accountId = accountIds[rng.int(0, DEMO_BOOK.accounts - 1)] as string;
      const source = rng.pick(["psa", "nps-survey", "billing"]);
      const type = rng.pick(["low_nps", "late_invoice", "ticket_spike", "exec_sponsor_left"]);
      const severity = rng.pick(["LOW", "MEDIUM", "HIGH", "CRITICAL"] as const);
      const score = rng.int(20, 90);
      const occurredAt = new Date(now - rng.int(0, 20) * DAY_MS);
      const expiresAt = new Date(occurredAt.getTime() + SIGNAL_DEFAULT_TTL_DAYS * DAY_MS);
      return { orgId, accountId, source, type, severity, score, message: "Demo signal", occurredAt, expiresAt };
    }),
  });

  const snapshots = await seedHealthHistory(orgId, accountIds, rng.next);
  return {
    accounts: accountIds.length,
    contacts: contactIds.length,
    deals: dealIds.length,
    devices,
    tasks: tasks.length,
    notes: notes.length,
    touchpoints: touchpoints.length,
    signals: DEMO_BOOK.signals,
    contracts: contractIds.length,
    leads: leadIds.length,
    healthSnapshots: snapshots,
  };
}

// Past days cannot be recomputed from today's data, so the demo history is a drift that ends at today's real score,
// stored first (with today's snapshot) as every score is: by a write, here the seed's.
async function seedHealthHistory(orgId: string, accountIds: string[], next: () => number): Promise<number> {
  await refreshHealthScores(orgId);
  const stored = await prisma().healthScore.findMany({ where: { orgId }, select: { accountId: true, score: true } });
  const current = new Map(stored.map((row) => [row.accountId, row.score]));
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
  const rows = [];
  for (const accountId of accountIds) {
    let score = current.get(accountId) ?? 0;
    for (let back = 1; back < 90; back++) {
      score = Math.max(0, Math.min(100, Math.round(score + (next() - 0.5) * 6)));
      rows.push({ id: newId(), accountId, day: new Date(today - back * DAY_MS).toISOString().slice(0, 10), score });
    }
  }
  // Several statements: each stays a short transaction (see DEVICE_BATCH).
  for (let start = 0; start < rows.length; start += SNAPSHOT_BATCH) {
    await prisma().$executeRawUnsafe(
      `INSERT INTO "HealthSnapshot" ("id", "orgId", "accountId", "day", "score", "updatedAt")
       SELECT r."id", $1, r."accountId", r."day", r."score", now() AT TIME ZONE 'UTC'
       FROM jsonb_to_recordset($2::jsonb) AS r("id" text, "accountId" text, "day" date, "score" int)`,
      orgId,
      JSON.stringify(rows.slice(start, start + SNAPSHOT_BATCH)),
    );
  }
  return rows.length + accountIds.length;
}

/** History rows per statement. */
const SNAPSHOT_BATCH = 6_000;
