// Examples of every request body and response of the public API (docs/api-contract.md §4.8): one small, consistent MSP
// book (the same account in the contact, deal, device and task examples), so the OpenAPI document, /docs and the
// Postman collection show requests that make sense together. Each schema carries its example in its `.meta()`; a test
// checks every example against its schema in the served document.

const ACCOUNT_ID = "cm7k2x0a80001northwind0";
const CONTACT_ID = "cm7k2x0a80002annalopez0";
const DEAL_ID = "cm7k2x0a80003renewal2027";
const CREATED_AT = "2026-11-02T09:15:27.114Z";
const UPDATED_AT = "2026-11-20T14:03:51.902Z";

/** An account's custom field values (docs/api-contract.md §2.13): the fields of {@link CUSTOM_FIELD_SCHEMA_EXAMPLE}. */
export const CUSTOM_FIELD_VALUES_EXAMPLE = {
  contract_tier: "gold",
  seats: 85,
  renewal_date: "2027-03-31",
  annual_value: { amount: 42000, currency: "EUR" },
};

/** An account (docs/api-contract.md §2.3). */
export const ACCOUNT_EXAMPLE = {
  id: ACCOUNT_ID,
  name: "Northwind Dental",
  lifecycleStatus: "ACTIVE",
  industry: "Healthcare",
  employeeCount: 85,
  domain: "northwind-dental.example",
  externalId: "psa-42",
  customFields: CUSTOM_FIELD_VALUES_EXAMPLE,
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /accounts`. */
export const ACCOUNT_CREATE_EXAMPLE = {
  name: "Northwind Dental",
  lifecycleStatus: "PROSPECT",
  industry: "Healthcare",
  employeeCount: 85,
  domain: "northwind-dental.example",
  externalId: "psa-42",
};

/** Body of `PATCH /accounts/{id}`. */
export const ACCOUNT_UPDATE_EXAMPLE = { lifecycleStatus: "ACTIVE", employeeCount: 92 };

/** Body of `POST /accounts/bulk`. */
export const ACCOUNT_BULK_EXAMPLE = {
  accounts: [
    { name: "Northwind Dental Group", externalId: "psa-42" },
    { name: "Harbor Logistics", industry: "Logistics", externalId: "psa-43" },
  ],
};

/** Response data of `POST /accounts/bulk`. */
export const ACCOUNT_BULK_RESULT_EXAMPLE = {
  created: 1,
  updated: 1,
  total: 2,
  results: [
    { externalId: "psa-42", id: ACCOUNT_ID, action: "updated" },
    { externalId: "psa-43", id: "cm7k2x0a80009harborlog0", action: "created" },
  ],
};

/** Response data of a hard delete. */
export const DELETED_EXAMPLE = { id: ACCOUNT_ID, deleted: true };

/** A contact with its account relationships (docs/api-contract.md §2.4). */
export const CONTACT_EXAMPLE = {
  id: CONTACT_ID,
  email: "anna.lopez@northwind-dental.example",
  firstName: "Anna",
  lastName: "Lopez",
  title: "Practice manager",
  phone: "+442071234567",
  accounts: [{ accountId: ACCOUNT_ID, accountName: "Northwind Dental", role: "Decision maker", isPrimary: true }],
  customFields: {},
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /contacts`. */
export const CONTACT_CREATE_EXAMPLE = {
  email: "anna.lopez@northwind-dental.example",
  firstName: "Anna",
  lastName: "Lopez",
  title: "Practice manager",
  accountId: ACCOUNT_ID,
  role: "Decision maker",
  isPrimary: true,
};

/** Body of `PATCH /contacts/{id}`. */
export const CONTACT_UPDATE_EXAMPLE = {
  title: "Operations director",
  accounts: [{ accountId: ACCOUNT_ID, role: "Decision maker", isPrimary: true }],
};

/** Body of `POST /contacts/bulk`. */
export const CONTACT_BULK_EXAMPLE = {
  contacts: [
    { email: "anna.lopez@northwind-dental.example", firstName: "Anna", accountId: ACCOUNT_ID },
    { email: "sam.chen@northwind-dental.example", firstName: "Sam", lastName: "Chen" },
  ],
};

/** Response data of `POST /contacts/bulk`. */
export const CONTACT_BULK_RESULT_EXAMPLE = {
  created: 1,
  updated: 1,
  total: 2,
  results: [
    { email: "anna.lopez@northwind-dental.example", id: CONTACT_ID, action: "updated" },
    { email: "sam.chen@northwind-dental.example", id: "cm7k2x0a80010samchen000", action: "created" },
  ],
};

/** Response data of `POST /contacts/{id}/erase` (docs/api-contract.md §4.16). */
export const CONTACT_ERASURE_EXAMPLE = {
  id: CONTACT_ID,
  erased: true,
  removed: { contacts: 1, accountLinks: 1, touchpointLinks: 3 },
  redacted: {
    events: 4,
    webhookDeliveries: 8,
    deliveryAttempts: 1,
    auditLogs: 2,
    idempotencyRecords: 0,
    customFieldRecords: 1,
  },
};

/** One result of `GET /search` (docs/api-contract.md §4.17). */
export const SEARCH_RESULT_EXAMPLE = {
  type: "account",
  id: ACCOUNT_ID,
  label: "Northwind Dental",
  sublabel: "northwind-dental.example",
  rank: 1.607927,
};

/** A page of `GET /search?q=northw`. */
export const SEARCH_PAGE_EXAMPLE = {
  data: [
    SEARCH_RESULT_EXAMPLE,
    {
      type: "contact",
      id: CONTACT_ID,
      label: "Anna Lopez",
      sublabel: "anna.lopez@northwind-dental.example",
      rank: 0.243171,
    },
  ],
  hasMore: false,
  nextCursor: "djEuMC4yNDMxNzEuY203azJ4MGE4MDAwMmFubmFsb3BlejAuY29udGFjdC5hYjEyY2QzNA",
};

/** Bodies of `POST /{resource}/search` (docs/api-contract.md §4.18), by resource. */
export const STRUCTURED_SEARCH_EXAMPLES: Record<string, unknown> = {
  accounts: {
    filterGroups: [
      {
        filters: [
          { field: "lifecycleStatus", operator: "in", value: ["ACTIVE", "AT_RISK"] },
          { field: "employeeCount", operator: "between", value: [50, 500] },
        ],
      },
      { filters: [{ field: "domain", operator: "notExists" }] },
    ],
    sort: "name:asc",
    limit: 50,
  },
  contacts: {
    filterGroups: [{ filters: [{ field: "email", operator: "contains", value: "northwind-dental" }] }],
    sort: "lastName:asc",
  },
  deals: {
    filterGroups: [
      {
        filters: [
          { field: "stage", operator: "in", value: ["PROPOSAL", "NEGOTIATION"] },
          { field: "estimatedMrr", operator: "gte", value: 1000 },
        ],
      },
    ],
    sort: "estimatedMrr:desc",
  },
  devices: {
    filterGroups: [{ filters: [{ field: "lastSeenAt", operator: "lt", value: "2026-11-01T00:00:00Z" }] }],
  },
  tasks: {
    filterGroups: [
      {
        filters: [
          { field: "status", operator: "ne", value: "DONE" },
          { field: "dueAt", operator: "lt", value: "2026-12-01T00:00:00Z" },
        ],
      },
    ],
    sort: "dueAt:asc",
  },
  notes: { filterGroups: [{ filters: [{ field: "objectId", operator: "eq", value: ACCOUNT_ID }] }] },
  touchpoints: {
    filterGroups: [{ filters: [{ field: "occurredAt", operator: "gte", value: "2026-11-01T00:00:00Z" }] }],
    sort: "occurredAt:desc",
  },
};

/** A deal (docs/api-contract.md §2.5). */
export const DEAL_EXAMPLE = {
  id: DEAL_ID,
  name: "Managed services renewal 2027",
  accountId: ACCOUNT_ID,
  estimatedMrr: 4250,
  probability: 70,
  stage: "NEGOTIATION",
  type: "RENEWAL",
  serviceCategory: "Managed Services",
  ownerId: "user-17",
  expectedCloseDate: "2026-12-15",
  closedAt: null,
  customFields: {},
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /deals`. */
export const DEAL_CREATE_EXAMPLE = {
  name: "Managed services renewal 2027",
  accountId: ACCOUNT_ID,
  estimatedMrr: 4250,
  probability: 60,
  stage: "PROPOSAL",
  type: "RENEWAL",
  serviceCategory: "Managed Services",
  ownerId: "user-17",
  expectedCloseDate: "2026-12-15",
};

/** Body of `PATCH /deals/{id}`: a stage change. */
export const DEAL_UPDATE_EXAMPLE = { stage: "NEGOTIATION", probability: 70 };

/** Body of `POST /deals/bulk`. */
export const DEAL_BULK_EXAMPLE = {
  deals: [
    { name: "Backup add-on", accountId: ACCOUNT_ID, estimatedMrr: 350, type: "UPSELL", serviceCategory: "Backup" },
    { name: "Security assessment", accountId: ACCOUNT_ID, estimatedMrr: 900, serviceCategory: "Security" },
  ],
};

/** Response data of `POST /deals/bulk`. */
export const DEAL_BULK_RESULT_EXAMPLE = {
  created: 2,
  total: 2,
  results: [
    { index: 0, id: "cm7k2x0a80011backupaddon" },
    { index: 1, id: "cm7k2x0a80012secassess0" },
  ],
};

/** A task (docs/api-contract.md §2.7). */
export const TASK_EXAMPLE = {
  id: "cm7k2x0a80004qbrprep0000",
  title: "Prepare the quarterly business review",
  description: "Uptime, ticket trends and the renewal proposal.",
  status: "IN_PROGRESS",
  priority: "HIGH",
  dueAt: "2026-12-01T16:00:00.000Z",
  assigneeId: "user-17",
  accountId: ACCOUNT_ID,
  dealId: DEAL_ID,
  completedAt: null,
  customFields: {},
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /tasks`. */
export const TASK_CREATE_EXAMPLE = {
  title: "Prepare the quarterly business review",
  description: "Uptime, ticket trends and the renewal proposal.",
  priority: "HIGH",
  dueAt: "2026-12-01T16:00:00.000Z",
  assigneeId: "user-17",
  accountId: ACCOUNT_ID,
  dealId: DEAL_ID,
};

/** Body of `PATCH /tasks/{id}`: completing it stamps completedAt. */
export const TASK_UPDATE_EXAMPLE = { status: "DONE" };

/** A device (docs/api-contract.md §2.6). */
export const DEVICE_EXAMPLE = {
  id: "cm7k2x0a80005frontdesk01",
  rmmAgentId: "agent-7f3c9e",
  accountId: ACCOUNT_ID,
  hostname: "NWD-FRONTDESK-01",
  deviceType: "Workstation",
  os: "Windows 11 Pro 24H2",
  isOnline: true,
  isEndOfLife: false,
  patchCompliant: true,
  lastSeenAt: "2026-11-24T08:59:12.000Z",
  customFields: {},
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /devices`. */
export const DEVICE_CREATE_EXAMPLE = {
  rmmAgentId: "agent-7f3c9e",
  accountId: ACCOUNT_ID,
  hostname: "NWD-FRONTDESK-01",
  deviceType: "Workstation",
  os: "Windows 11 Pro 24H2",
  isOnline: true,
  lastSeenAt: "2026-11-24T08:59:12.000Z",
};

/** Body of `PATCH /devices/{id}`: the device went offline. */
export const DEVICE_UPDATE_EXAMPLE = { isOnline: false };

/** Body of `POST /devices/bulk`. */
export const DEVICE_BULK_EXAMPLE = {
  devices: [
    { rmmAgentId: "agent-7f3c9e", accountId: ACCOUNT_ID, hostname: "NWD-FRONTDESK-01", isOnline: false },
    { rmmAgentId: "agent-81aa02", accountId: ACCOUNT_ID, hostname: "NWD-XRAY-02", deviceType: "Workstation" },
  ],
};

/** Response data of `POST /devices/bulk`. */
export const DEVICE_BULK_RESULT_EXAMPLE = {
  created: 1,
  updated: 1,
  total: 2,
  results: [
    { rmmAgentId: "agent-7f3c9e", id: "cm7k2x0a80005frontdesk01", action: "updated" },
    { rmmAgentId: "agent-81aa02", id: "cm7k2x0a80013xray02000", action: "created" },
  ],
};

/** A touchpoint (docs/api-contract.md §2.9). */
export const TOUCHPOINT_EXAMPLE = {
  id: "cm7k2x0a80006qbrcall0000",
  accountId: ACCOUNT_ID,
  contactId: CONTACT_ID,
  type: "CALL",
  direction: "OUTBOUND",
  subject: "QBR scheduling",
  notes: "Agreed on 1 December; Anna brings the new office plans.",
  occurredAt: "2026-11-20T14:00:00.000Z",
  createdAt: UPDATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /touchpoints`. */
export const TOUCHPOINT_CREATE_EXAMPLE = {
  accountId: ACCOUNT_ID,
  contactId: CONTACT_ID,
  type: "CALL",
  direction: "OUTBOUND",
  subject: "QBR scheduling",
  notes: "Agreed on 1 December; Anna brings the new office plans.",
  occurredAt: "2026-11-20T14:00:00.000Z",
};

/** A note (docs/api-contract.md §2.8). */
export const NOTE_EXAMPLE = {
  id: "cm7k2x0a80007notebackup0",
  objectType: "Account",
  objectId: ACCOUNT_ID,
  body: "Backups to the new NAS verified after the move.",
  authorId: "user-17",
  createdAt: UPDATED_AT,
  updatedAt: UPDATED_AT,
};

/** Body of `POST /notes`. */
export const NOTE_CREATE_EXAMPLE = {
  objectType: "Account",
  objectId: ACCOUNT_ID,
  body: "Backups to the new NAS verified after the move.",
  authorId: "user-17",
};

const SIGNALS_EXAMPLE = [
  {
    key: "devices",
    label: "Device health",
    weight: 25,
    value: 32.5,
    contribution: 8.13,
    detail: "1 of 4 devices offline, 2 end-of-life, 1 not patch-compliant",
    inputs: { total: 4, offline: 1, endOfLife: 2, notPatchCompliant: 1 },
  },
  {
    key: "engagement",
    label: "Engagement",
    weight: 25,
    value: 25,
    contribution: 6.25,
    detail: "30 days since the last touchpoint",
    inputs: { daysSinceLastTouchpoint: 30, lastTouchpointAt: "2026-10-25T10:00:00.000Z" },
  },
  {
    key: "pipeline",
    label: "Pipeline",
    weight: 20,
    value: 75,
    contribution: 15,
    detail: "1 open renewal, 1 deal lost in the last 90 days",
    inputs: { openRenewals: 1, lostDealsLast90Days: 1 },
  },
  {
    key: "service",
    label: "Service",
    weight: 15,
    value: 40,
    contribution: 6,
    detail: "2 overdue tasks",
    inputs: { overdueTasks: 2 },
  },
  {
    key: "external",
    label: "External signals",
    weight: 15,
    value: 70,
    contribution: 10.5,
    detail: "2 active signals",
    inputs: { activeSignals: 2 },
  },
];

/** An external churn-risk signal as stored. */
export const HEALTH_SIGNAL_EXAMPLE = {
  id: "cm7k2x0a80008npslow00000",
  accountId: ACCOUNT_ID,
  source: "nps-survey",
  type: "low_nps",
  severity: "HIGH",
  score: 50,
  message: "NPS 4 from the practice manager",
  occurredAt: "2026-11-19T08:00:00.000Z",
  expiresAt: "2026-12-19T08:00:00.000Z",
  createdAt: "2026-11-19T08:00:03.512Z",
  active: true,
};

/** An item of `GET /health-scores`. */
export const HEALTH_SCORE_SUMMARY_EXAMPLE = {
  accountId: ACCOUNT_ID,
  accountName: "Northwind Dental",
  lifecycleStatus: "ACTIVE",
  score: 46,
  riskLevel: "MEDIUM",
  computedAt: "2026-11-24T09:00:00.000Z",
  signals: SIGNALS_EXAMPLE,
};

/** Response data of `GET /health-scores/{accountId}` (history shortened here; the API returns 90 points). */
export const HEALTH_SCORE_EXAMPLE = {
  ...HEALTH_SCORE_SUMMARY_EXAMPLE,
  externalSignals: [HEALTH_SIGNAL_EXAMPLE],
  history: [
    { date: "2026-11-22", score: 41 },
    { date: "2026-11-23", score: 41 },
    { date: "2026-11-24", score: 46 },
  ],
};

/** Body of `POST /health-scores/{accountId}/signals`. */
export const HEALTH_SIGNAL_CREATE_EXAMPLE = {
  source: "nps-survey",
  type: "low_nps",
  severity: "HIGH",
  score: 50,
  message: "NPS 4 from the practice manager",
  occurredAt: "2026-11-19T08:00:00.000Z",
};

/** Response data of `POST /health-scores/{accountId}/signals`. */
export const HEALTH_SIGNAL_CREATED_EXAMPLE = {
  signal: HEALTH_SIGNAL_EXAMPLE,
  accountId: ACCOUNT_ID,
  score: 46,
  riskLevel: "MEDIUM",
  computedAt: "2026-11-24T09:00:00.000Z",
};

const MRR_FIGURES = {
  mrr: 18250,
  accounts: 6,
  deals: 9,
  weightedPipeline: 5110.5,
  pipelineMrr: 9800,
  openDeals: 5,
  churnedMrr: 1200,
  churnedAccounts: 1,
  churnedDeals: 1,
};

/** Response data of `GET /mrr`. */
export const MRR_EXAMPLE = {
  computedAt: "2026-11-24T09:00:00.000Z",
  totals: MRR_FIGURES,
  categories: [{ serviceCategory: "Managed Services", ...MRR_FIGURES }],
};

/** Response data of `GET /status`. */
export const STATUS_EXAMPLE = {
  status: "ok",
  version: "v1",
  database: { status: "up", latencyMs: 1, driver: "postgres" },
  cache: { status: "up", latencyMs: 1, driver: "redis" },
};

/** An event of the feed and of webhook payloads: an account update by an API key. */
export const EVENT_EXAMPLE = {
  id: "evt_1763984100_Qm9vS2VlcGVyMDE",
  event: "account.updated",
  sequence: 10234,
  timestamp: "2026-11-24T10:15:00.000Z",
  orgId: "cm7k2x0a80000acmeorg0000",
  resource: "account",
  actor: { type: "api_key", id: "cm7k2x0a80009apikey00000" },
  data: {
    ...ACCOUNT_EXAMPLE,
    employeeCount: 92,
    customFields: { ...CUSTOM_FIELD_VALUES_EXAMPLE, seats: 92 },
    updatedAt: "2026-11-24T10:15:00.000Z",
  },
  changedFields: ["employeeCount", "customFields.seats"],
  previous: { employeeCount: 85, "customFields.seats": 85 },
};

/** A page of the events feed. */
export const EVENT_PAGE_EXAMPLE = {
  data: [EVENT_EXAMPLE],
  hasMore: false,
  nextCursor: "djIuMTAyMzQuMTc5NTUxNTMwMA",
};

/** A webhook endpoint. */
export const WEBHOOK_ENDPOINT_EXAMPLE = {
  id: "wh_5f2c9d0e1a7b4c3d8e6f0a12",
  url: "https://psa.example.com/hooks/crm",
  description: "PSA sync",
  events: ["account.created", "account.updated", "account.deleted"],
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  consecutiveFailures: 0,
  createdAt: CREATED_AT,
  updatedAt: CREATED_AT,
  previousSecretExpiresAt: null,
  changedFields: ["name", "lifecycleStatus", "customFields.contract_tier"],
};

/** Body of `POST /webhook-endpoints`: account events, `account.updated` only when one of three fields changed. */
export const WEBHOOK_ENDPOINT_CREATE_EXAMPLE = {
  url: "https://psa.example.com/hooks/crm",
  events: ["account.created", "account.updated", "account.deleted"],
  description: "PSA sync",
  changedFields: ["name", "lifecycleStatus", "customFields.contract_tier"],
};

/** Answer of `POST /webhook-endpoints`: the secret is shown this once. */
export const WEBHOOK_ENDPOINT_CREATED_EXAMPLE = {
  ...WEBHOOK_ENDPOINT_EXAMPLE,
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9pQw0Ytq1Yk=",
};

/** Body of `PATCH /webhook-endpoints/{id}`: every account and deal event, updates of the fields named only. */
export const WEBHOOK_ENDPOINT_UPDATE_EXAMPLE = {
  events: ["account.*", "deal.*"],
  changedFields: ["lifecycleStatus", "stage", "estimatedMrr"],
  enabled: true,
};

/** Answer of `POST /webhook-endpoints/{id}/rotate-secret`. */
export const WEBHOOK_SECRET_EXAMPLE = {
  secret: "whsec_2d0Hj3yq9zv8Q2YV6m1sXq0nQ8d6p4Yx3tQm9Xc1vEo=",
  previousSecretExpiresAt: "2026-11-25T09:00:00.000Z",
};

/** One delivery attempt. */
export const DELIVERY_ATTEMPT_EXAMPLE = {
  attemptId: "1042",
  deliveryId: "whd_0a1b2c3d4e5f60718293a4b5",
  eventId: "evt_1763984100_Qm9vS2VlcGVyMDE",
  event: "account.updated",
  attempt: 1,
  url: "https://psa.example.com/hooks/crm",
  responseStatus: 200,
  success: true,
  durationMs: 84,
  error: null,
  startedAt: "2026-11-24T10:15:01.204Z",
  trigger: "scheduled",
  replayId: null,
};

/** Answer of `POST /webhook-endpoints/{id}/test`. */
export const WEBHOOK_TEST_EXAMPLE = {
  eventId: "evt_1763984160_VGVzdEV2ZW50MDE",
  attempt: { ...DELIVERY_ATTEMPT_EXAMPLE, eventId: "evt_1763984160_VGVzdEV2ZW50MDE", event: "webhook.test" },
};

/** Response data of `GET /usage` (three 30-minute buckets, shortened from the 48 of a day). */
export const USAGE_EXAMPLE = {
  from: "2026-11-24T09:00:00.000Z",
  to: "2026-11-24T10:30:00.000Z",
  granularity: "30m",
  totals: { requests: 1290, byStatusClass: { "2xx": 1204, "3xx": 31, "4xx": 52, "5xx": 3 }, p95Ms: 75 },
  topErrors: [
    { status: 404, errorCode: "not_found", requests: 30 },
    { status: 429, errorCode: "rate_limited", requests: 22 },
    { status: 500, errorCode: "internal_error", requests: 3 },
  ],
  buckets: [
    {
      start: "2026-11-24T09:00:00.000Z",
      end: "2026-11-24T09:30:00.000Z",
      requests: 420,
      byStatusClass: { "2xx": 401, "3xx": 10, "4xx": 9, "5xx": 0 },
      p95Ms: 50,
    },
    {
      start: "2026-11-24T09:30:00.000Z",
      end: "2026-11-24T10:00:00.000Z",
      requests: 610,
      byStatusClass: { "2xx": 560, "3xx": 15, "4xx": 32, "5xx": 3 },
      p95Ms: 75,
    },
    {
      start: "2026-11-24T10:00:00.000Z",
      end: "2026-11-24T10:30:00.000Z",
      requests: 260,
      byStatusClass: { "2xx": 243, "3xx": 6, "4xx": 11, "5xx": 0 },
      p95Ms: 50,
    },
  ],
};
/** A custom field definition (docs/api-contract.md §2.13): the accounts' contract tier. */
export const CUSTOM_FIELD_EXAMPLE = {
  id: "cm7k2x0a80010tierfield0",
  resource: "account",
  key: "contract_tier",
  label: "Contract tier",
  type: "select",
  description: "Support tier of the managed-services contract.",
  options: [
    { value: "gold", label: "Gold", archivedAt: null },
    { value: "silver", label: "Silver", archivedAt: null },
    { value: "bronze", label: "Bronze", archivedAt: null },
  ],
  required: false,
  searchable: true,
  createdAt: CREATED_AT,
  updatedAt: UPDATED_AT,
  archivedAt: null,
};

/** Body of `POST /custom-fields`. */
export const CUSTOM_FIELD_CREATE_EXAMPLE = {
  resource: "account",
  key: "contract_tier",
  label: "Contract tier",
  type: "select",
  description: "Support tier of the managed-services contract.",
  options: [
    { value: "gold", label: "Gold" },
    { value: "silver", label: "Silver" },
    { value: "bronze", label: "Bronze" },
  ],
  searchable: true,
};

/** Body of `PATCH /custom-fields/{id}`: a new option and an archived one. */
export const CUSTOM_FIELD_UPDATE_EXAMPLE = {
  label: "Contract tier",
  options: [
    { value: "gold", label: "Gold" },
    { value: "silver", label: "Silver" },
    { value: "bronze", label: "Bronze", archived: true },
    { value: "platinum", label: "Platinum" },
  ],
};

/** Response data of `GET /custom-fields/schema?resource=account`. */
export const CUSTOM_FIELD_SCHEMA_EXAMPLE = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "Custom fields of accounts",
  description:
    "customFields of an account of this organisation: one property per active field, every one optional (a record lacks a field it has no value for).",
  type: "object",
  properties: {
    contract_tier: {
      title: "Contract tier",
      description: "Support tier of the managed-services contract.",
      type: "string",
      enum: ["gold", "silver", "bronze"],
      maxLength: 100,
    },
    seats: { title: "Seats", type: "number", minimum: -1e15, maximum: 1e15 },
    renewal_date: { title: "Renewal date", type: "string", format: "date", maxLength: 10 },
    annual_value: {
      title: "Annual value",
      type: "object",
      properties: {
        amount: { type: "number", minimum: -1e15, maximum: 1e15 },
        currency: { type: "string", pattern: "^[A-Z]{3}$", maxLength: 3 },
      },
      required: ["amount", "currency"],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
};

/** Body of `POST /webhook-endpoints/{id}/replays`: what failed or was missed since a time, deal events only. */
export const WEBHOOK_REPLAY_CREATE_EXAMPLE = {
  since: "2026-11-24T06:00:00Z",
  statuses: ["failed", "missing"],
  events: ["deal.*"],
};

/** A replay of an endpoint's failed and missing deliveries, under way. */
export const WEBHOOK_REPLAY_EXAMPLE = {
  id: "whr_9c1d2e3f4a5b6c7d8e9f0a1b",
  endpointId: "wh_5f2c9d0e1a7b4c3d8e6f0a12",
  status: "running",
  since: "2026-11-24T06:00:00.000Z",
  until: "2026-11-24T10:20:00.000Z",
  statuses: ["failed", "missing"],
  events: ["deal.*"],
  matched: 412,
  sent: 130,
  succeeded: 130,
  reason: null,
  createdAt: "2026-11-24T10:20:00.000Z",
  finishedAt: null,
};

/** Answer of a dry run: how many deliveries the replay would send. */
export const WEBHOOK_REPLAY_DRY_RUN_EXAMPLE = {
  dryRun: true,
  matched: 412,
  since: "2026-11-24T06:00:00.000Z",
  until: "2026-11-24T10:20:00.000Z",
};
