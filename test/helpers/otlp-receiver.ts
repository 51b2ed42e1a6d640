// An OpenTelemetry collector stand-in on 127.0.0.1: accepts OTLP/HTTP in JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`)
// at /v1/traces, /v1/metrics and /v1/logs, answers 200 as a collector does, and keeps what it got, flattened.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** An OTLP attribute value as JSON encodes it. */
type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};

/** One span as received, with its attributes decoded and the resource's `service.name`. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  serviceName: string;
  scope: string;
}

/** One data point of a metric as received. */
export interface ReceivedPoint {
  metric: string;
  unit: string;
  attributes: Record<string, string | number | boolean>;
  /** Histograms: the count; sums and gauges: the value. */
  value: number;
}

/** A running receiver: its base URL (the `OTEL_EXPORTER_OTLP_ENDPOINT`) and what it received so far. */
export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  close(): Promise<void>;
}

function decode(attributes: Array<{ key: string; value: AnyValue }> | undefined) {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

interface TracesBody {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: AnyValue }> };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: Array<{ key: string; value: AnyValue }>;
      }>;
    }>;
  }>;
}

type JsonPoint = { attributes?: Array<{ key: string; value: AnyValue }>; asInt?: string | number; asDouble?: number };
interface MetricsBody {
  resourceMetrics?: Array<{
    scopeMetrics?: Array<{
      metrics?: Array<{
        name: string;
        unit?: string;
        histogram?: { dataPoints?: Array<JsonPoint & { count?: string | number }> };
        sum?: { dataPoints?: JsonPoint[] };
        gauge?: { dataPoints?: JsonPoint[] };
      }>;
    }>;
  }>;
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: "", spans: [], points: [], close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      if (req.method !== "POST" || !/json/.test(req.headers["content-type"] ?? "")) {
        res.writeHead(415).end();
        return;
      }
      if (req.url === "/v1/traces") {
        const body = JSON.parse(text) as TracesBody;
        for (const resource of body.resourceSpans ?? []) {
          const serviceName = String(decode(resource.resource?.attributes)["service.name"] ?? "");
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              receiver.spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? "",
                name: span.name,
                kind: span.kind,
                attributes: decode(span.attributes),
                serviceName,
                scope: scope.scope?.name ?? "",
              });
            }
          }
        }
      } else if (req.url === "/v1/metrics") {
        const body = JSON.parse(text) as MetricsBody;
        for (const resource of body.resourceMetrics ?? []) {
          for (const scope of resource.scopeMetrics ?? []) {
            for (const metric of scope.metrics ?? []) {
              const base = { metric: metric.name, unit: metric.unit ?? "" };
              for (const point of metric.histogram?.dataPoints ?? [])
                receiver.points.push({ ...base, attributes: decode(point.attributes), value: Number(point.count) });
              for (const point of [...(metric.sum?.dataPoints ?? []), ...(metric.gauge?.dataPoints ?? [])])
                receiver.points.push({
                  ...base,
                  attributes: decode(point.attributes),
                  value: Number(point.asInt ?? point.asDouble),
                });
            }
          }
        }
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
