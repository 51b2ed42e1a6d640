// Rate limits over real HTTP on the in-memory driver (neither REDIS_URL nor KV_REST_API_* set): the embedded default.
import { rateLimitSuite } from "./rate-limit.suite";

rateLimitSuite("memory", {
  before: async () => {
    delete process.env.REDIS_URL;
    delete process.env.KV_REST_API_URL;
    delete process.env.KV_REST_API_TOKEN;
  },
});
