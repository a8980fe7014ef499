import type { RequestSpan, SpanAttributeValue } from './request-span.js';

/**
 * OTLP/JSON, the protobuf JSON mapping with the OTLP exceptions: ids are lower-case hex (not
 * base64), enums are numbers, and 64-bit integers may be a decimal string or a JSON number.
 * `intValue` is sent as a number, as the official JS exporter does; collectors accept both.
 * Times stay strings, because epoch nanoseconds exceed what a JSON number holds exactly.
 */
export type OtlpAnyValue =
  | { stringValue: string }
  | { intValue: number }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: OtlpAnyValue[] } };

export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

interface OtlpStatus {
  /** 0 unset, 1 ok, 2 error. */
  code: 0 | 1 | 2;
  message?: string;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  droppedAttributesCount: number;
  events: never[];
  droppedEventsCount: number;
  status: OtlpStatus;
  links: never[];
  droppedLinksCount: number;
  flags: number;
}

export interface ExportTraceServiceRequest {
  resourceSpans: {
    resource: { attributes: OtlpKeyValue[]; droppedAttributesCount: number };
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

interface TraceResource {
  serviceName: string;
  serviceVersion: string;
}

export interface SpanIds {
  /** 32 lower-case hex characters. */
  traceId: string;
  /** 16 lower-case hex characters. */
  spanId: string;
}

/**
 * CLIENT, not SERVER. The gateway is a server to its caller, but the span describes the inference
 * call it makes on the caller's behalf, and the GenAI conventions give that call kind CLIENT; GenAI
 * backends look for it there. Without incoming trace context there is no caller span to be the
 * server half of, and `http.*` server attributes are not what this span is about.
 */
const SPAN_KIND_CLIENT = 3;

/** Sampled (0x01), and "parent is known not remote" (0x100): a root span, as the JS SDK marks it. */
const ROOT_SPAN_FLAGS = 0x101;

/**
 * Encodes request spans as one OTLP/HTTP JSON `ExportTraceServiceRequest`. Pure: `ids` supplies a
 * fresh trace and span id per span (each request is its own trace). Only `name`, times, status and
 * `attributes` of a span are read; nothing else on the object reaches the output.
 */
export function encodeTraces(
  spans: readonly RequestSpan[],
  resource: TraceResource,
  ids: () => SpanIds,
): ExportTraceServiceRequest {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: encodeAttributes({
            'service.name': resource.serviceName,
            'service.version': resource.serviceVersion,
          }),
          droppedAttributesCount: 0,
        },
        scopeSpans: [
          {
            scope: { name: 'tollgate', version: resource.serviceVersion },
            spans: spans.map((span) => encodeSpan(span, ids())),
          },
        ],
      },
    ],
  };
}

function encodeSpan(span: RequestSpan, ids: SpanIds): OtlpSpan {
  return {
    traceId: ids.traceId,
    spanId: ids.spanId,
    name: span.name,
    kind: SPAN_KIND_CLIENT,
    startTimeUnixNano: msToUnixNano(span.startMs),
    endTimeUnixNano: msToUnixNano(span.endMs),
    attributes: encodeAttributes(span.attributes),
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    status: span.status === 'ok' ? { code: 1 } : errorStatus(span.errorCode),
    links: [],
    droppedLinksCount: 0,
    flags: ROOT_SPAN_FLAGS,
  };
}

function errorStatus(errorCode: string | undefined): OtlpStatus {
  return errorCode ? { code: 2, message: errorCode } : { code: 2 };
}

/** Attributes in insertion order; `null`, `undefined` and non-finite numbers are left out. */
function encodeAttributes(attributes: Record<string, SpanAttributeValue>): OtlpKeyValue[] {
  const out: OtlpKeyValue[] = [];
  for (const [key, raw] of Object.entries(attributes)) {
    const value = encodeValue(raw);
    if (value) out.push({ key, value });
  }
  return out;
}

function encodeValue(value: SpanAttributeValue): OtlpAnyValue | undefined {
  if (value == null) return undefined;
  if (Array.isArray(value))
    return { arrayValue: { values: value.map((item) => ({ stringValue: String(item) })) } };
  switch (typeof value) {
    case 'string':
      return { stringValue: value };
    case 'boolean':
      return { boolValue: value };
    case 'number':
      if (!Number.isFinite(value)) return undefined;
      // Beyond 2^53 a number is no longer an exact integer, so it goes as a double.
      return Number.isSafeInteger(value) ? { intValue: value } : { doubleValue: value };
    default:
      return undefined;
  }
}

const NANOS_PER_MS = 1_000_000n;

/**
 * Epoch milliseconds as a decimal string of nanoseconds, exact: `ms * 1e6` as a float would round
 * (1.7e18 is far past 2^53), so the product is taken in BigInt. A sub-millisecond fraction is kept
 * to the nanosecond. A negative or non-finite time becomes "0" rather than an invalid body.
 */
export function msToUnixNano(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0';
  const whole = Math.trunc(ms);
  const fractionNanos = Math.round((ms - whole) * 1e6);
  return (BigInt(whole) * NANOS_PER_MS + BigInt(fractionNanos)).toString();
}
