// The in-process reference of the throughput benchmark: the REST facade (`handleApiRequest`) behind a minimal
// node:http adapter, without Next.js, so the report can tell the framework's share of the cost from the facade's.
// Started by bench/run.ts as a child process: env DATABASE_URL, REDIS_URL, PORT; listens on 127.0.0.1.
import { startApi } from "../test/helpers/http-server";

const server = await startApi(Number(process.env.PORT ?? 0));
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    void server.close();
    process.exit(0);
  });
}
