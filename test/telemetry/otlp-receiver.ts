import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A local OTLP/HTTP endpoint for tests: takes `/v1/traces` and `/v1/metrics` in both encodings
 * (`application/x-protobuf`, decoded with the OTLP protobuf definitions the OTel exporters ship, and
 * `application/json`) and keeps what arrived, flattened.
 */
// The OTLP protobuf root the exporters encode with (a static protobufjs module).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const otlpRoot = require('@opentelemetry/otlp-transformer/build/src/generated/root') as {
  opentelemetry: { proto: { collector: Record<string, Record<string, Record<string, ProtoType>>> } };
};
interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}
const collector = otlpRoot.opentelemetry.proto.collector;
const TraceRequest = collector.trace!.v1!.ExportTraceServiceRequest!;
const MetricsRequest = collector.metrics!.v1!.ExportMetricsServiceRequest!;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  status?: { code?: number | string; message?: string };
  /** The span's events (`exception` among them), each with its attributes. */
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  service?: unknown;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Names of every metric received. */
  metrics: Map<string, unknown[]>;
  /** Content types of the trace requests received. */
  traceEncodings: string[];
  /** The encoding each metric arrived in (`protobuf`, `json`; both when it came in both). */
  metricEncodings: Map<string, Set<string>>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics = new Map<string, unknown[]>();
  const traceEncodings: string[] = [];
  const metricEncodings = new Map<string, Set<string>>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const json = (req.headers['content-type'] ?? '').includes('json');
        if (req.url === '/v1/traces') {
          traceEncodings.push(json ? 'json' : 'protobuf');
          spans.push(...flattenSpans(json ? JSON.parse(body.toString('utf8')) : protoObject(TraceRequest, body)));
        } else if (req.url === '/v1/metrics') {
          const names = collectMetrics(
            json ? JSON.parse(body.toString('utf8')) : protoObject(MetricsRequest, body),
            metrics,
          );
          for (const name of names) {
            metricEncodings.set(name, (metricEncodings.get(name) ?? new Set()).add(json ? 'json' : 'protobuf'));
          }
        } else {
          res.writeHead(404).end();
          return;
        }
        res
          .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
          .end(json ? '{}' : '');
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    traceEncodings,
    metricEncodings,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function protoObject(type: ProtoType, body: Buffer): unknown {
  return type.toObject(type.decode(body), { longs: Number, bytes: String, enums: Number, defaults: false });
}

/** Span and trace ids: hex in OTLP/JSON, bytes (here base64) in protobuf. */
function hexId(id: unknown): string | undefined {
  if (typeof id !== 'string' || id === '') return undefined;
  return /^[0-9a-f]+$/.test(id) && (id.length === 16 || id.length === 32)
    ? id
    : Buffer.from(id, 'base64').toString('hex');
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function attributeValue(v: Obj | undefined): unknown {
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return ((v.arrayValue as Obj).values ?? []).map((x: Obj) => attributeValue(x));
  return undefined;
}

function attributes(list: Obj[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key as string, attributeValue(a.value as Obj)]));
}

function flattenSpans(request: Obj): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans ?? []) as Obj[]) {
    const service = attributes(rs.resource?.attributes)['service.name'];
    for (const ss of (rs.scopeSpans ?? []) as Obj[]) {
      for (const s of (ss.spans ?? []) as Obj[]) {
        const parentSpanId = hexId(s.parentSpanId);
        out.push({
          traceId: hexId(s.traceId)!,
          spanId: hexId(s.spanId)!,
          ...(parentSpanId ? { parentSpanId } : {}),
          name: s.name as string,
          attributes: attributes(s.attributes),
          status: s.status as ReceivedSpan['status'],
          events: ((s.events ?? []) as Obj[]).map((e) => ({
            name: e.name as string,
            attributes: attributes(e.attributes),
          })),
          service,
        });
      }
    }
  }
  return out;
}

/** Adds the request's data points to `into`; returns the names of the metrics it held. */
function collectMetrics(request: Obj, into: Map<string, unknown[]>): string[] {
  const names: string[] = [];
  for (const rm of (request.resourceMetrics ?? []) as Obj[]) {
    for (const sm of (rm.scopeMetrics ?? []) as Obj[]) {
      for (const m of (sm.metrics ?? []) as Obj[]) {
        const points = (m.histogram ?? m.sum ?? m.gauge)?.dataPoints ?? [];
        into.set(m.name as string, [...(into.get(m.name as string) ?? []), ...points]);
        names.push(m.name as string);
      }
    }
  }
  return names;
}
