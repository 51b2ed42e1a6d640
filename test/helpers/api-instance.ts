// One more instance of the REST facade in a process of its own, for tests about what instances share (the key-value
// store): `node --import tsx test/helpers/api-instance.ts` with PORT (default: any free port) and the instance's
// environment; prints its /api/v1 URL as the first line of stdout once it listens, stops on SIGTERM.
import { startApi } from "./http-server";

const server = await startApi(Number(process.env.PORT ?? 0));
console.log(server.url);
process.on("SIGTERM", () => {
  void server.close().finally(() => process.exit(0));
});
