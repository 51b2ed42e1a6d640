// What reaches the log when code logs carelessly: the logger removes credentials by field name and by shape.
import { afterEach, expect, it } from "vitest";
import { captureLog, type LogCapture } from "../../test/helpers/log-capture";
import { EnvSchema } from "../env";
import { log, requestLog } from "./logger";

const KEY = `msp_live_${"A1b2C3d4E5".repeat(3)}Zz9Yy8`;
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9pQw0Ytq1Yk=";

let capture: LogCapture | undefined;
afterEach(() => capture?.restore());

it("writes an error's message and stack without the API keys, webhook secrets and bearer tokens they quote", () => {
  capture = captureLog();
  const error = new Error(`Invalid invocation: { key: "${KEY}", secret: "${SECRET}", header: "Bearer tok_123456" }`);
  log().error({ requestId: "req_0123456789abcdef01234567", err: error }, "procedure failed");
  const [line] = capture.lines();
  const text = JSON.stringify(line);
  expect(line).toMatchObject({
    level: "error",
    msg: "procedure failed",
    requestId: "req_0123456789abcdef01234567",
    err: {
      type: "Error",
      message: expect.stringContaining("Invalid invocation"),
      stack: expect.stringContaining("logger.test.ts"),
    },
  });
  for (const secret of [KEY, KEY.slice(9), SECRET, "tok_123456"]) expect(text).not.toContain(secret);
  expect(text).toContain("[redacted]");
});

it("replaces fields named like credentials, at the top and one level down", () => {
  capture = captureLog();
  log().warn(
    {
      authorization: `Bearer ${KEY}`,
      password: "Correct-Horse-Battery-9",
      headers: { authorization: `Bearer ${KEY}`, cookie: "msp_session=abc", accept: "application/json" },
      endpoint: { id: "wh_1", secret: SECRET },
    },
    "careless",
  );
  const [line] = capture.lines();
  expect(line).toMatchObject({
    authorization: "[redacted]",
    password: "[redacted]",
    headers: { authorization: "[redacted]", cookie: "[redacted]", accept: "application/json" },
    endpoint: { id: "wh_1", secret: "[redacted]" },
  });
});

it("writes nothing below LOG_LEVEL", () => {
  capture = captureLog("warn");
  log().info({ requestId: "req_x" }, "request");
  log().warn("kept");
  expect(capture.lines().map((line) => line.msg)).toEqual(["kept"]);
});

it("refuses a LOG_LEVEL it does not know, a METRICS_PORT equal to PORT and a METRICS_TOKEN under 16 characters", () => {
  const problems = (env: Record<string, string>) =>
    EnvSchema.safeParse(env).error?.issues.map((issue) => issue.path.join(".")) ?? [];
  expect(problems({ LOG_LEVEL: "verbose" })).toEqual(["LOG_LEVEL"]);
  expect(problems({ PORT: "3000", METRICS_PORT: "3000" })).toEqual(["METRICS_PORT"]);
  expect(problems({ METRICS_TOKEN: "short" })).toEqual(["METRICS_TOKEN"]);
  expect(EnvSchema.parse({ LOG_LEVEL: " Debug ", METRICS_PORT: "9464", METRICS_TOKEN: "x".repeat(16) })).toMatchObject({
    LOG_LEVEL: "debug",
    METRICS_PORT: 9464,
  });
  expect(EnvSchema.parse({}).LOG_LEVEL).toBe("info");
});

it("writes a request's line with its fields, cheaply redacted at the top level", () => {
  capture = captureLog();
  requestLog().info({ requestId: "req_1", route: "/api/v1/accounts/{id}", status: 200, password: "x" }, "request");
  expect(capture.lines()).toEqual([
    expect.objectContaining({ level: "info", msg: "request", route: "/api/v1/accounts/{id}", password: "[redacted]" }),
  ]);
});
