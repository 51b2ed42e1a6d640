// The lines the server's logger writes, as written (after level filtering, redaction and serialisation), for tests
// that run the service in-process.
import pino from "pino";
import { log, requestLog } from "../../server/observability/logger";

/** Lines written since {@link captureLog} was called, parsed; `restore` stops capturing and resets the level. */
export interface LogCapture {
  lines(): Array<Record<string, unknown>>;
  restore(): void;
}

/**
 * Captures what the process's logger writes (still writing it), request lines included, at `level` (default `info`)
 * for the capture's duration.
 */
export function captureLog(level: pino.LevelWithSilent = "info"): LogCapture {
  const logger = log();
  const stream = (logger as unknown as Record<symbol, { write(chunk: string): boolean }>)[pino.symbols.streamSym];
  if (!stream) throw new Error("the logger has no stream");
  const written: string[] = [];
  const write = stream.write.bind(stream);
  stream.write = (chunk: string) => {
    written.push(chunk);
    return write(chunk);
  };
  const requests = requestLog();
  const previous = [logger.level, requests.level] as const;
  logger.level = level;
  requests.level = level;
  return {
    lines: () =>
      written
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    restore: () => {
      stream.write = write;
      [logger.level, requests.level] = previous;
    },
  };
}
