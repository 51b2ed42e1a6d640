import { transaction } from "../../db/transaction";
import { ApiError } from "../../errors";
import { recordSettingsAudit } from "../../identity/audit-trail/service";
import { forgetCachedKeys } from "./key-cache";
import { keyRecognition } from "./recognition";
import { type ApiKeySummary, createApiKey, describeKey, type KeyChangeBy } from "./service";

/** How long the old key of a rotation keeps working: 24 hours (86,400,000 ms), time to roll the new key out. */
export const KEY_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * Rotates a key (docs/api-contract.md §5.3 "a lost key must be rotated"): creates a new key with the same name, scopes,
 * mode (live/test) and service-key flag, and lets the old one keep working for {@link KEY_ROTATION_GRACE_MS} by setting its `expiresAt`
 * (enforced by `authenticateApiKey`). Revoke the old key to end it sooner. One transaction: both or neither, and with
 * `by` the new key's creator and an `apiKey.rotated` entry in the settings audit trail.
 * @returns `{ key, raw, previous: { id, expiresAt } }`: the new key (raw value shown once) and when the old one stops.
 * @throws ApiError `not_found` (404) when the key is not an active key of the organisation (missing, another
 *         organisation's, revoked or expired); `validation_error` (422) when it is already the old key of a rotation.
 */
export async function rotateApiKey(
  orgId: string,
  apiKeyId: string,
  by?: KeyChangeBy,
): Promise<{ key: ApiKeySummary; raw: string; previous: { id: string; expiresAt: Date } }> {
  // The successor's checksum needs the secret, which is never read inside a transaction.
  await keyRecognition();
  const rotated = await transaction(async (tx) => {
    // Locks the old key so two concurrent rotations cannot both create a successor.
    const rows = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM "ApiKey" WHERE id = ${apiKeyId} AND "orgId" = ${orgId} FOR UPDATE`;
    if (rows.length === 0) throw new ApiError("not_found", `API key ${apiKeyId} not found`);
    const old = await tx.apiKey.findFirstOrThrow({
      where: { id: apiKeyId, orgId },
      select: {
        id: true,
        name: true,
        prefix: true,
        scopes: true,
        isTest: true,
        serviceKey: true,
        revokedAt: true,
        expiresAt: true,
      },
    });
    const now = Date.now();
    if (old.revokedAt || (old.expiresAt && old.expiresAt.getTime() <= now)) {
      throw new ApiError("not_found", `API key ${apiKeyId} not found`);
    }
    if (old.expiresAt) {
      throw new ApiError(
        "validation_error",
        `This key was already rotated and stops working at ${old.expiresAt.toISOString()}; rotate its successor instead`,
      );
    }
    const created = await createApiKey(
      orgId,
      { name: old.name, scopes: old.scopes, isTest: old.isTest, serviceKey: old.serviceKey },
      by && { createdById: by.createdById },
    );
    const expiresAt = new Date(now + KEY_ROTATION_GRACE_MS);
    await tx.apiKey.update({ where: { id: old.id }, data: { expiresAt } });
    if (by?.actor) {
      await recordSettingsAudit(orgId, by.actor, {
        action: "apiKey.rotated",
        target: describeKey(old),
        details: { mode: old.isTest ? "test" : "live", keyId: old.id, successorId: created.key.id },
      });
    }
    return { ...created, previous: { id: old.id, expiresAt } };
  });
  // The old key's end must reach the instances that keep it in memory.
  await forgetCachedKeys();
  return rotated;
}
