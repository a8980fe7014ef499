import { describe, expect, it } from 'vitest';
import { meteredUsage } from '../../metering/usage.js';
import { fixtureJson } from '../../providers/wire-fixtures.test-support.js';
import { responseAsEvents } from './response-as-events.js';
import { readResponsesStream } from './responses-events.test-support.js';
import { responsesStreamWriter } from './responses-stream-writer.js';

const served = {
  requestId: 'req_1',
  model: 'acme/chat',
  provider: 'p1',
  attempts: 0,
  requestedModel: 'acme/chat',
};
const usage = meteredUsage({ promptTokens: 1, completionTokens: 1 });
const gateway = { request_id: 'req_1', cost_micros: 0, waived: 'cache hit' };

/** A cached answer replayed as a stream: its events through the request's writer. */
function replayed(answer: Record<string, unknown>): string {
  const writer = responsesStreamWriter(
    {
      wire: { model: 'm', input: 'x' },
      tools: [],
      custom: new Set(),
      makeId: (p) => p,
      responseId: 'resp_1',
      now: () => 0,
    },
    served,
  );
  let text = '';
  for (const event of responseAsEvents(answer)) text += writer.write(event).text;
  return text + writer.end({ finishReason: 'stop', usage, gateway, error: null, createdAt: 0 });
}

describe('responseAsEvents (a cached Response streamed)', () => {
  it.each([
    ['a recorded text answer', 'openai-responses-text.recorded.json'],
    ['a recorded reasoning and text answer', 'openai-responses-reasoning-then-text.json'],
  ])('%s: a valid stream whose terminal response is the answer, with gateway', (_, file) => {
    const answer = fixtureJson(file) as Record<string, unknown>;
    const read = readResponsesStream(replayed(answer));
    expect(read.terminal).toEqual({ ...answer, gateway });
    expect(read.events[0]?.data.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
  });

  it('a custom tool call and a cut-short answer', () => {
    const answer = {
      id: 'resp_1',
      object: 'response',
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [
        {
          type: 'custom_tool_call',
          id: 'ctc_1',
          status: 'incomplete',
          call_id: 'c',
          name: 'apply_patch',
          input: '*** Begin',
        },
      ],
    };
    const read = readResponsesStream(replayed(answer));
    expect(read.events.at(-1)?.event).toBe('response.incomplete');
    expect(read.streamed.get('ctc_1')).toBe('*** Begin');
  });
});
