export {
  type ExportTraceServiceRequest,
  encodeTraces,
  msToUnixNano,
  type OtlpAnyValue,
  type OtlpKeyValue,
  type OtlpSpan,
  type SpanIds,
  type TraceResource,
} from './encode-otlp-json.js';
export {
  createOtlpExporter,
  type OtlpExporter,
  type OtlpExporterOptions,
  type OtlpExporterStats,
  otlpTracesUrl,
} from './otlp-exporter.js';
export {
  type ChatSpanInput,
  chatRequestSpan,
  chatSpanAttributes,
  type RequestSpan,
  type SpanAttributeValue,
} from './request-span.js';
export { type RandomBytes, randomSpanIds } from './span-ids.js';
