// Rate limits over real HTTP on the TCP Redis driver (REDIS_URL from the global setup: the shared Redis).
import { rateLimitSuite } from "./rate-limit.suite";

rateLimitSuite("redis");
