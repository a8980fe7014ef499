import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../storage/metering-types.js';
import { compileRule } from './compile-rule.js';
import { OutputGuard, STREAM_WINDOW_CHARS } from './output-guard.js';
import { requestTexts } from './request-texts.js';

const cardRule = compileRule({
  id: 'grd_card',
  accountId: 'acct_1',
  name: 'no cards',
  stage: 'output',
  category: 'payment_card',
  pattern: null,
  createdAt: 0,
});
const newRecord = () => ({ guardrails: [] }) as unknown as RequestRecord;
const delta = (content: string, index = 0) => ({ choices: [{ index, delta: { content } }] });
const VERDICT = { rule_id: 'grd_card', name: 'no cards', category: 'payment_card', stage: 'output' };

describe('OutputGuard', () => {
  it('checkAnswer - finds a card in any choice or tool-call argument, records the verdict, never the text', () => {
    const guard = new OutputGuard([cardRule]);
    const record = newRecord();
    const answer = {
      choices: [
        { message: { content: 'fine' } },
        { message: { content: null, tool_calls: [{ function: { arguments: '{"n":"4111111111111111"}' } }] } },
      ],
    };
    const error = guard.checkAnswer(answer, record);
    expect(error?.code).toBe('guardrail_blocked');
    expect(error?.message).toContain('"no cards"');
    expect(error?.message).toContain('charged');
    expect(error?.message).not.toContain('4111');
    expect(record.guardrails).toEqual([VERDICT]);
    expect(guard.checkAnswer({ choices: [{ message: { content: 'ok' } }] }, newRecord())).toBeNull();
  });

  it('watch - catches a card split across chunks, on the chunk that completes it', () => {
    const record = newRecord();
    const watch = new OutputGuard([cardRule]).watch(record);
    expect(watch.see(delta('number: 4111 11'))).toBeNull();
    expect(watch.see(delta('11 1111 '))).toBeNull();
    expect(watch.see(delta('1111 done'))?.code).toBe('guardrail_blocked');
    expect(record.guardrails).toEqual([VERDICT]);
  });

  it('watch - keeps choices apart, and catches a split after a long text (past the window)', () => {
    const watch = new OutputGuard([cardRule]).watch(newRecord());
    expect(watch.see(delta('4111 1111 ', 0))).toBeNull();
    expect(watch.see(delta('1111 1111', 1))).toBeNull();
    expect(watch.see(delta(`${'word '.repeat(STREAM_WINDOW_CHARS)}4111 1111 `, 0))).toBeNull();
    expect(watch.see(delta('1111 1111', 0))).not.toBeNull();
  });
});

describe('OutputGuard - the Anthropic Messages wire', () => {
  const blockDelta = (index: number, delta: Record<string, unknown>) => ({
    type: 'content_block_delta',
    index,
    delta,
  });

  it('checkAnswer - reads a Messages answer’s text, tool input and thinking blocks', () => {
    const guard = new OutputGuard([cardRule]);
    const answer = (block: Record<string, unknown>) => ({
      type: 'message',
      content: [{ type: 'text', text: 'ok' }, block],
    });
    expect(
      guard.checkAnswer(answer({ type: 'text', text: 'card 4111 1111 1111 1111' }), newRecord()),
    ).not.toBeNull();
    expect(
      guard.checkAnswer(
        answer({ type: 'tool_use', id: 't', name: 'pay', input: { n: '4111111111111111' } }),
        newRecord(),
      ),
    ).not.toBeNull();
    expect(
      guard.checkAnswer(answer({ type: 'thinking', thinking: '4111111111111111' }), newRecord()),
    ).not.toBeNull();
    expect(guard.checkAnswer(answer({ type: 'text', text: 'nothing here' }), newRecord())).toBeNull();
  });

  it('watch - joins the deltas of one content block, text or tool input, and keeps blocks apart', () => {
    const watch = new OutputGuard([cardRule]).watch(newRecord());
    expect(watch.see(blockDelta(0, { type: 'text_delta', text: '4111 1111 ' }))).toBeNull();
    expect(
      watch.see(blockDelta(1, { type: 'input_json_delta', partial_json: '{"n":"1111 1111' })),
    ).toBeNull();
    expect(watch.see({ type: 'message_delta', delta: { stop_reason: 'tool_use' } })).toBeNull();
    expect(watch.see(blockDelta(0, { type: 'text_delta', text: '1111 1111' }))?.code).toBe(
      'guardrail_blocked',
    );
  });
});

describe('requestTexts', () => {
  it('reads message strings, text parts, tool-call arguments, embeddings input and rerank documents', () => {
    expect(
      requestTexts({
        messages: [
          { role: 'system', content: 'a' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'b' },
              { type: 'image_url', image_url: { url: 'x' } },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: 'c' } }] },
        ],
        input: ['d', 1],
        documents: [{ text: 'e' }, 'f'],
        query: 'g',
      }),
    ).toEqual(['a', 'b', 'c', 'd', 'g', 'e', 'f']);
  });
});
