import { describe, expect, it } from 'vitest';
import { assemble, payloads, replay, usage } from './stream-replay.test-support.js';
import { openAIWireBody, randomSplit, seededRandom, splitAt } from './wire-fixtures.test-support.js';

/** The text of the 302-chunk gpt-4.1-nano recording, in full. */
const HOLIDAY_TEXT = [
  '**Holiday Name:** Harmony Day',
  '',
  '**Date:** Celebrated annually on the first Saturday of May',
  '',
  '**Purpose:** Harmony Day is dedicated to fostering understanding, kindness, and unity among diverse communities. It emphasizes celebrating cultural differences while promoting empathy and collaboration.',
  '',
  '**Traditions:**',
  '',
  '1. **Cultural Potluck Gatherings:** Communities come together to share traditional dishes from their backgrounds, encouraging conversation and curiosity about different cultures.',
  '',
  '2. **Story Circles:** People of all ages are encouraged to share stories from their heritage or personal experiences that promote understanding and empathy.',
  '',
  '3. **Decorate for Unity:** Public spaces and homes are decorated with symbols representing different cultures—flags, traditional art, and meaningful motifs—to visually celebrate diversity.',
  '',
  '4. **Collaborative Art Projects:** Communities create murals or sculptures that symbolize unity and diversity, involving artists and residents of all ages.',
  '',
  '5. **Acts of Kindness:** As a central activity, participants perform Small acts of kindness throughout the day, such as volunteering, helping neighbors, or inviting someone new to join festivities.',
  '',
  '6. **Music & Dance Festivals:** Local performances showcase a variety of musical styles and dances from different parts of the world, emphasizing shared joy and creativity.',
  '',
  '7. **Educational Workshops:** Interactive sessions teach about various cultures’ histories, traditions, and celebrations, fostering respect and knowledge.',
  '',
  '**Overall Spirit:** Harmony Day aims to create a sense of global community, reminding everyone that despite our differences, we are all connected through shared human experiences and mutual respect.',
].join('\n');

const RECORDINGS = [
  {
    file: 'openai-chat-stream-parallel-tool-calls-include-usage.sse',
    chunks: 24,
    text: '',
    reasoning: '',
    toolCalls: {
      0: {
        id: 'call_JMW1whyEaYG438VE1OIflxA2',
        name: 'GetWeatherArgs',
        arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}',
      },
      1: {
        id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou',
        name: 'get_stock_price',
        arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}',
      },
    },
    finishReasons: ['tool_calls'],
    usage: usage(149, 0, 60),
  },
  {
    file: 'openai-chat-stream-single-tool-call-include-usage.sse',
    chunks: 16,
    text: '',
    reasoning: '',
    toolCalls: {
      0: {
        id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
        name: 'GetWeatherArgs',
        arguments: '{"city":"Edinburgh","country":"UK","units":"c"}',
      },
    },
    finishReasons: ['tool_calls'],
    usage: usage(76, 0, 24),
  },
  {
    file: 'openai-chat-stream-text-include-usage.chunks.txt',
    chunks: 302,
    text: HOLIDAY_TEXT,
    reasoning: '',
    toolCalls: {},
    finishReasons: ['stop'],
    usage: usage(16, 0, 300),
  },
  {
    file: 'openai-compatible-deepseek-stream-tool-call.chunks.txt',
    chunks: 52,
    text: '',
    reasoning:
      'The user is asking for the weather in San Francisco. I need to use the weather tool to get this ' +
      'information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
    toolCalls: {
      0: {
        id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF',
        name: 'weather',
        arguments: '{"location": "San Francisco"}',
      },
    },
    finishReasons: ['tool_calls'],
    usage: usage(339, 320, 83),
  },
  {
    file: 'openai-compatible-groq-stream-tool-call.chunks.txt',
    chunks: 3,
    text: '',
    reasoning: '',
    toolCalls: { 0: { id: 'tk85n1k4m', name: 'weather', arguments: '{}' } },
    finishReasons: ['tool_calls'],
    usage: usage(210, 0, 15),
  },
  {
    file: 'openai-compatible-anthropic-endpoint-tool-call.sse',
    chunks: 8,
    text: 'Reading it.',
    reasoning: '',
    toolCalls: { 1: { id: 'toolu_sanitized', name: 'read_file', arguments: '{"path": "a.txt"}' } },
    finishReasons: ['tool_calls'],
    usage: null,
  },
];

describe('convertOpenAIStream - recorded streams', () => {
  it.each(RECORDINGS)('$file: text, reasoning, tool calls, finish reason and usage', async (recording) => {
    const result = await replay([openAIWireBody(recording.file)]);
    expect(result.error).toBeUndefined();
    expect(result.chunks).toHaveLength(recording.chunks);
    expect(assemble(result.chunks)).toEqual({
      text: recording.text,
      reasoning: recording.reasoning,
      toolCalls: recording.toolCalls,
      finishReasons: recording.finishReasons,
    });
    expect(result.usage).toEqual(recording.usage);
  });

  it.each(RECORDINGS)(
    '$file: every chunk passes through with every field, only `usage` removed',
    async ({ file }) => {
      const wire = openAIWireBody(file);
      const sent = payloads(wire)
        .filter(
          (payload) => !(Array.isArray(payload.choices) && payload.choices.length === 0 && payload.usage),
        )
        .map(({ usage: _usage, ...rest }) => rest);
      const { chunks } = await replay([wire]);
      expect(chunks).toEqual(sent);
      expect(chunks.filter((chunk) => 'usage' in chunk)).toEqual([]);
    },
  );

  it('consumes the usage-only chunk (`choices: []`): the last chunk yielded is the finish chunk', async () => {
    const { chunks } = await replay([
      openAIWireBody('openai-chat-stream-parallel-tool-calls-include-usage.sse'),
    ]);
    expect(chunks.filter((chunk) => chunk.choices.length === 0)).toEqual([]);
    expect(chunks.at(-1)).toEqual({
      id: 'chatcmpl-ABfwAwrNePHUgBBezonVC6MX3zd63',
      object: 'chat.completion.chunk',
      created: 1727346178,
      model: 'gpt-4o-2024-08-06',
      system_fingerprint: 'fp_5050236cbd',
      choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }],
    });
  });

  it('keeps vendor fields: obfuscation and service_tier (OpenAI), reasoning_content (DeepSeek), x_groq', async () => {
    const text = await replay([openAIWireBody('openai-chat-stream-text-include-usage.chunks.txt')]);
    expect(text.chunks[0]).toEqual({
      id: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0',
      object: 'chat.completion.chunk',
      created: 1770933892,
      model: 'gpt-4.1-nano-2025-04-14',
      service_tier: 'default',
      system_fingerprint: 'fp_de604bd877',
      choices: [
        {
          index: 0,
          delta: { role: 'assistant', content: '', refusal: null },
          logprobs: null,
          finish_reason: null,
        },
      ],
      obfuscation: 'Qup1BsQ3',
    });

    const deepseek = await replay([openAIWireBody('openai-compatible-deepseek-stream-tool-call.chunks.txt')]);
    expect(deepseek.chunks.at(-1)?.choices).toEqual([
      {
        index: 0,
        delta: { content: '', reasoning_content: null },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ]);
    expect(deepseek.chunks.at(-1)).not.toHaveProperty('usage');

    const groq = await replay([openAIWireBody('openai-compatible-groq-stream-tool-call.chunks.txt')]);
    expect(groq.chunks[2]?.x_groq).toEqual({
      id: 'req_01kh52nj5yfcat8hrmvrk2j2hj',
      usage: {
        queue_time: 0.041520249,
        prompt_tokens: 210,
        prompt_time: 0.010407901,
        completion_tokens: 15,
        completion_time: 0.046601227,
        total_tokens: 225,
        total_time: 0.057009128,
      },
    });
    expect(groq.chunks[2]?.choices[0]?.finish_reason).toBe('tool_calls');
  });
});

describe('convertOpenAIStream - byte boundaries', () => {
  it.each(RECORDINGS)('$file: 40 random re-chunkings give the same chunks and usage', async ({ file }) => {
    const wire = openAIWireBody(file);
    const whole = await replay([wire]);
    for (let seed = 1; seed <= 40; seed++) {
      const random = seededRandom(seed);
      const split = await replay(randomSplit(wire, random, seed % 2 === 0 ? 8 : 200));
      expect(split, `seed ${seed}`).toEqual(whole);
    }
  });

  it('groq recording: a cut at every byte offset, and byte-by-byte, give the same output', async () => {
    const wire = openAIWireBody('openai-compatible-groq-stream-tool-call.chunks.txt');
    const whole = await replay([wire]);
    for (let cut = 1; cut < wire.length; cut++) {
      expect(await replay(splitAt(wire, [cut])), `cut at ${cut}`).toEqual(whole);
    }
    const everyByte = Array.from({ length: wire.length - 1 }, (_, i) => i + 1);
    expect(await replay(splitAt(wire, everyByte))).toEqual(whole);
  });
});
