export {
  createOtlpExporter,
  type OtlpExporter,
} from './otlp-exporter.js';
export type { RequestSpan } from './request-span.js';
