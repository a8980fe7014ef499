export { FakeClock } from '@tollgate/core';
export { createTestGateway, type TestGateway, type TestGatewayOptions } from './create-test-gateway.js';
export {
  FakeUpstream,
  type StreamOptions,
  UnansweredUpstreamError,
  type UpstreamCall,
  type UpstreamFailure,
} from './fake-upstream.js';
export type { StreamEvent } from './sse-events.js';
