import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../upstream-error.js';
import { assemble, replayText, usage } from './stream-replay.test-support.js';
import { openAIWireBody } from './wire-fixtures.test-support.js';

const CHUNK = (content: string, finish: string | null = null) =>
  `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":${JSON.stringify(finish)}}]}\n\n`;

describe('convertOpenAIStream - failures', () => {
  it('an `event: error` mid-stream throws UpstreamError(network) after the chunks before it', async () => {
    const wire = new TextDecoder().decode(
      openAIWireBody('openai-chat-stream-single-tool-call-include-usage.sse'),
    );
    const events = wire.split('\n\n');
    const broken = [
      ...events.slice(0, 3),
      'event: error\ndata: {"error":{"message":"Overloaded","type":"server_error","param":null,"code":null}}',
      ...events.slice(3),
    ].join('\n\n');
    const result = await replayText(broken);
    expect(result.chunks).toHaveLength(3);
    expect(assemble(result.chunks).toolCalls).toEqual({
      0: { id: 'call_c91SqDXlYFuETYv8mUHzz6pp', name: 'GetWeatherArgs', arguments: '{"city' },
    });
    expect(result.error).toBeInstanceOf(UpstreamError);
    // The provider's code (else its type) rides along for a wire that names codes (Responses).
    expect(result.error).toMatchObject({
      kind: 'network',
      message: 'Overloaded',
      status: null,
      code: 'server_error',
    });
    expect(result.usage).toBeNull();
  });

  it('an `event: error` whose data is not an error envelope throws with a generic message', async () => {
    const result = await replayText(`${CHUNK('Hi')}event: error\ndata: <html>bad gateway</html>\n\n`);
    expect(result.chunks).toHaveLength(1);
    expect(result.error).toMatchObject({
      kind: 'network',
      message: 'upstream sent an error event',
      code: null,
    });
  });

  it('a `data: {"error":{…}}` payload mid-stream throws with the provider message', async () => {
    const result = await replayText(
      `${CHUNK('Hel')}${CHUNK('lo')}data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}\n\n${CHUNK('!', 'stop')}data: [DONE]\n\n`,
    );
    expect(assemble(result.chunks).text).toBe('Hello');
    expect(result.error).toBeInstanceOf(UpstreamError);
    expect(result.error).toMatchObject({
      kind: 'network',
      message: 'The server had an error while processing your request.',
      code: 'server_error',
    });
  });

  it('an error payload with a code keeps the code over the type', async () => {
    const result = await replayText(
      `${CHUNK('Hi')}data: {"error":{"message":"Rate limit reached. Please try again in 2s.","type":"requests","code":"rate_limit_exceeded"}}\n\n`,
    );
    expect(result.error).toMatchObject({ kind: 'network', code: 'rate_limit_exceeded' });
  });

  it('a data line that is not JSON throws (nothing is silently skipped)', async () => {
    const result = await replayText(
      `${CHUNK('Hi')}data: {"id":"c1","choices":[{"index":0,\n\n${CHUNK('', 'stop')}`,
    );
    expect(assemble(result.chunks).text).toBe('Hi');
    expect(result.error).toMatchObject({
      kind: 'network',
      message: 'upstream sent a malformed stream chunk',
    });
  });

  it('a JSON payload that is not a chunk throws', async () => {
    const result = await replayText(`data: 42\n\n`);
    expect(result.error).toMatchObject({
      kind: 'network',
      message: 'upstream sent a malformed stream chunk',
    });
  });

  it('a stream that ends with neither [DONE] nor a finish_reason is broken', async () => {
    const result = await replayText(`${CHUNK('Hel')}${CHUNK('lo')}`);
    expect(assemble(result.chunks).text).toBe('Hello');
    expect(result.error).toMatchObject({
      kind: 'network',
      message: 'upstream stream ended before it finished',
    });
  });

  it('a stream that ends without [DONE] after a finish_reason is complete', async () => {
    const result = await replayText(`${CHUNK('Hello')}${CHUNK('', 'stop')}`);
    expect(result.error).toBeUndefined();
    expect(assemble(result.chunks)).toMatchObject({ text: 'Hello', finishReasons: ['stop'] });
  });
});

describe('convertOpenAIStream - edge shapes', () => {
  it('stops reading at [DONE]', async () => {
    const result = await replayText(
      `${CHUNK('Hi', 'stop')}data: [DONE]\n\n${CHUNK('after')}data: not json\n\n`,
    );
    expect(result.error).toBeUndefined();
    expect(assemble(result.chunks).text).toBe('Hi');
  });

  it('a usage-only chunk without `choices` is consumed; a chunk without choices or usage gets `choices: []`', async () => {
    const result = await replayText(
      `data: {"id":"c0","prompt_filter_results":[]}\n\n${CHUNK('Hi', 'stop')}data: {"id":"c1","usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}\n\ndata: [DONE]\n\n`,
    );
    expect(result.chunks[0]).toEqual({ id: 'c0', prompt_filter_results: [], choices: [] });
    expect(result.chunks).toHaveLength(2);
    expect(result.usage).toEqual(usage(5, 0, 1));
  });

  it('the last usage report wins (servers that repeat running totals)', async () => {
    const u = (completion: number) =>
      `"usage":{"prompt_tokens":7,"completion_tokens":${completion},"total_tokens":${7 + completion}}`;
    const result = await replayText(
      `data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],${u(1)}}\n\n` +
        `data: {"id":"c","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],${u(2)}}\n\n` +
        'data: [DONE]\n\n',
    );
    expect(result.usage).toEqual(usage(7, 0, 2));
    expect(result.chunks.map((chunk) => 'usage' in chunk)).toEqual([false, false]);
  });

  it('a usage object without readable counts leaves usage unknown instead of breaking the stream', async () => {
    const result = await replayText(
      `${CHUNK('Hi', 'stop')}data: {"id":"c","choices":[],"usage":{"total_tokens":"many"}}\n\ndata: [DONE]\n\n`,
    );
    expect(result.error).toBeUndefined();
    expect(result.usage).toBeNull();
    expect(result.chunks).toHaveLength(1);
  });

  it('ignores events of other named types and empty data', async () => {
    const result = await replayText(
      `event: ping\ndata: {}\n\ndata:\n\n: keep-alive\n\n${CHUNK('Hi', 'stop')}data: [DONE]\n\n`,
    );
    expect(result.error).toBeUndefined();
    expect(assemble(result.chunks).text).toBe('Hi');
  });
});
