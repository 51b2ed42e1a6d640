// Run by `npm run build` in a process of its own (scripts/build-server.ts, buildEmbeddedTemplate), with DATA_DIR the
// staging folder of the embedded database's demo template: opens a new embedded database there (a copy of the migrated
// template), seeds the demo organisation's book without a key, a user or a secret, and closes it cleanly
// (docs/architecture.md, "The embedded database").
import { closeDb, connectDatabase } from "../server/db/client";
import { openEmbeddedDatabase } from "../server/db/embedded";
import { prisma } from "../server/db/transaction";
import { createDemoOrganisation } from "../server/demo/demo";
import { env } from "../server/env";

// The seed writes some 100 MB of WAL; with the smallest WAL PostgreSQL keeps, the checkpoint after it leaves two
// segments for every first start to copy instead of seven.
const opening = openEmbeddedDatabase(env().DATA_DIR, {
  settings: ["-c", "min_wal_size=32MB", "-c", "max_wal_size=32MB"],
});
await connectDatabase({ own: true, opening });
try {
  await createDemoOrganisation();
  await prisma().$executeRawUnsafe("CHECKPOINT");
} finally {
  await closeDb();
}
