// The directory events of an organisation (docs/api-contract.md §11.5): what provisioning did to its team, and what
// it refused, for the directory page's list (last sync, what changed, errors).
import type { Prisma } from "../../db/generated/client";
import { prisma } from "../../db/transaction";

/** Every action a directory event records, with how the directory page names it (docs/api-contract.md §11.5). */
export const DIRECTORY_ACTIONS = {
  "member.joined": "Joined",
  "member.role_changed": "Role changed",
  "member.deprovisioned": "Deprovisioned",
  "member.reactivated": "Reactivated",
  "member.kept": "Not added",
  "signin.refused": "Sign-in refused",
  "request.failed": "Request refused",
  "token.created": "Token created",
  "token.rotated": "Token rotated",
  "token.revoked": "Token revoked",
} as const;

/** An action of {@link DIRECTORY_ACTIONS} (docs/api-contract.md §11.5). */
export type DirectoryAction = keyof typeof DIRECTORY_ACTIONS;

/**
 * One event to write: what happened, to whom (an email, a group) and facts (roles, counts, the refusal's words).
 * Source: docs/api-contract.md §11.5.
 */
export interface DirectoryEventInput {
  action: DirectoryAction;
  target?: string | null;
  outcome?: "ok" | "error";
  details?: Record<string, string | number | boolean | null>;
}

/** One event as the page shows it; `id` is the row's BIGSERIAL as a decimal string (docs/api-contract.md §11.5). */
export interface DirectoryEventView {
  id: string;
  createdAt: Date;
  action: string;
  target: string | null;
  outcome: string;
  details: Prisma.JsonValue;
}

/**
 * Writes one event of `orgId` with the current client: inside a transaction it commits (or rolls back) with it.
 * Source: docs/api-contract.md §11.5.
 */
export async function recordDirectoryEvent(orgId: string, event: DirectoryEventInput): Promise<void> {
  await prisma().directoryEvent.create({
    data: {
      orgId,
      action: event.action,
      target: event.target?.slice(0, 500) ?? null,
      outcome: event.outcome ?? "ok",
      details: event.details ?? undefined,
    },
  });
}

/**
 * The organisation's latest directory events, newest first.
 * @param limit at most this many (1–200; default 50).
 * Source: docs/api-contract.md §11.5.
 */
export async function listDirectoryEvents(orgId: string, limit = 50): Promise<DirectoryEventView[]> {
  const rows = await prisma().directoryEvent.findMany({
    where: { orgId },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(Math.max(limit, 1), 200),
  });
  return rows.map((row) => ({
    id: row.id.toString(),
    createdAt: row.createdAt,
    action: row.action,
    target: row.target,
    outcome: row.outcome,
    details: row.details,
  }));
}
