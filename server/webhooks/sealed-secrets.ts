// Webhook signing secrets in stored idempotent answers (docs/architecture.md, "Idempotency"): the answer of a create or
// a rotation is stored with its secret replaced by the SHA-256 of it, and a replay reads the secret back from the
// endpoint's own column while it is still the endpoint's current secret. So no secret rests in plaintext outside that
// column, and a replay never hands out a secret that was rotated away.
import { hash } from "node:crypto";
import { prisma } from "../db/transaction";
import type { AnswerSeal } from "../platform/idempotency";

/** What a stored answer holds in place of a secret: this prefix and the secret's SHA-256 in hex. */
export const SEALED_SECRET_PREFIX = "whsec-sha256:";
const SEALED = /"whsec-sha256:([0-9a-f]{64})"/;

function digest(secret: string): string {
  return hash("sha256", secret, "hex");
}

/**
 * The seal of the answers of `POST /webhook-endpoints` and `POST /webhook-endpoints/{id}/rotate-secret`
 * (docs/api-contract.md §8.4): `data.secret` (a `whsec_…` string) is stored as `whsec-sha256:<64 hex>`; unsealing puts
 * back the organisation's endpoint secret with that digest, or answers null when no endpoint has it any more (rotated
 * since, or deleted). The text around the secret is kept byte for byte.
 */
export const webhookSecretSeal: AnswerSeal = {
  seal(body) {
    const secret = (JSON.parse(body) as { data?: { secret?: unknown } }).data?.secret;
    if (typeof secret !== "string") return body;
    return body.replace(JSON.stringify(secret), () => JSON.stringify(`${SEALED_SECRET_PREFIX}${digest(secret)}`));
  },
  async unseal(orgId, body) {
    const sealed = SEALED.exec(body);
    if (!sealed) return body;
    const [endpoint] = await prisma().$queryRaw<Array<{ secret: string }>>`
      SELECT "secret" FROM "WebhookEndpoint"
      WHERE "orgId" = ${orgId} AND encode(sha256(convert_to("secret", 'UTF8')), 'hex') = ${sealed[1]}`;
    return endpoint ? body.replace(sealed[0], () => JSON.stringify(endpoint.secret)) : null;
  },
};
