// Run as its own process with DATABASE_URL set (the migration test's database): signs in through better-auth with
// the email and password in argv and prints `{ "userId", "activeOrgId" }` as JSON, or `{ "error", "status" }`.

import { closeDb } from "../../server/db/client";
import { prisma } from "../../server/db/transaction";
import { authFor } from "../../server/identity/better-auth";
import { closeKv } from "../../server/kv";
import { CLIENT_ADDRESS_HEADER } from "../../server/platform/client-address";

const [email = "", password = ""] = process.argv.slice(2);
try {
  const headers = new Headers({ [CLIENT_ADDRESS_HEADER]: "198.18.0.1", "user-agent": "sign-in-once" });
  const result = await authFor("http://localhost:3000").api.signInEmail({ headers, body: { email, password } });
  const session = await prisma().session.findUnique({ where: { token: result.token }, select: { activeOrgId: true } });
  console.log(JSON.stringify({ userId: result.user.id, activeOrgId: session?.activeOrgId ?? null }));
} catch (error) {
  console.log(
    JSON.stringify({ error: String((error as Error).message), status: (error as { statusCode?: number }).statusCode }),
  );
} finally {
  await closeDb();
  await closeKv();
}
