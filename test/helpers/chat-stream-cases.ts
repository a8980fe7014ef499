import { UPSTREAM } from './chat-gateway.js';
import { contentOf, parseSse } from './sse.js';
import { fixtureWireBody } from './wire-fixtures.js';

export interface ExpectedToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One recorded stream and what the caller must get from it through the gateway. */
export interface StreamCase {
  fixture: string;
  /** The catalogue model the request names (it is served by the provider the fixture came from). */
  model: string;
  format: 'openai' | 'anthropic';
  /** The mock path the upstream call goes to. */
  path: string;
  /** The assembled text (null: the turn has no text). */
  content: string | null;
  toolCalls: ExpectedToolCall[];
  finishReason: string;
  /** The usage of the terminal chunk (Anthropic: prompt = input + cache read + cache write). */
  usage: { prompt_tokens: number; completion_tokens: number; cached_tokens: number };
  /** The cost in micros, worked out by hand below. */
  costMicros: number;
  /** Tools to declare in the request (so the SDK call looks like a real tool call). */
  toolNames: string[];
  /**
   * The user message sent (default `Go.`): as long as the recorded prompt where the recording
   * reports thousands of prompt tokens, so that the hold covers them (a charge never exceeds its hold).
   */
  prompt?: string;
}

/** A prompt the pre-flight estimates at 18,750 tokens, as long as the recorded cache streams' 18,642. */
const LONG_PROMPT = 'Go. '.repeat(18_750);

/** The text a recorded OpenAI-format stream carries (its content deltas, concatenated). */
function recordedText(fixture: string): string {
  return contentOf(parseSse(fixtureWireBody(fixture)));
}

/**
 * Every recorded stream, with hand-worked costs. Prices per million tokens (chat-gateway.ts):
 * acme/gpt 0.11 / 0.44; deepseek/reasoner 0.55 / 2.19 / cached 0.14; groq/llama 0.59 / 0.79;
 * acme/claude 3 / 15 / cached 0.30 / cache_write 3.75. A cost is Σ tokens × price / 10⁶ at full
 * precision, rounded up once.
 */
export const STREAM_CASES: StreamCase[] = [
  {
    fixture: 'openai-chat-stream-parallel-tool-calls-include-usage.sse',
    model: 'acme/gpt',
    format: 'openai',
    path: UPSTREAM.openai,
    content: null,
    toolCalls: [
      {
        id: 'call_JMW1whyEaYG438VE1OIflxA2',
        name: 'GetWeatherArgs',
        arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}',
      },
      {
        id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou',
        name: 'get_stock_price',
        arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 149, completion_tokens: 60, cached_tokens: 0 },
    // 149 × 0.11 = 16.39 + 60 × 0.44 = 26.4 → 42.79 → 43 (per part rounded up: 17 + 27 = 44)
    costMicros: 43,
    toolNames: ['GetWeatherArgs', 'get_stock_price'],
  },
  {
    fixture: 'openai-chat-stream-single-tool-call-include-usage.sse',
    model: 'acme/gpt',
    format: 'openai',
    path: UPSTREAM.openai,
    content: null,
    toolCalls: [
      {
        id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
        name: 'GetWeatherArgs',
        arguments: '{"city":"Edinburgh","country":"UK","units":"c"}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 76, completion_tokens: 24, cached_tokens: 0 },
    // 76 × 0.11 = 8.36 + 24 × 0.44 = 10.56 → 18.92 → 19
    costMicros: 19,
    toolNames: ['GetWeatherArgs'],
  },
  {
    fixture: 'openai-chat-stream-text-include-usage.chunks.txt',
    model: 'acme/gpt',
    format: 'openai',
    path: UPSTREAM.openai,
    content: recordedText('openai-chat-stream-text-include-usage.chunks.txt'),
    toolCalls: [],
    finishReason: 'stop',
    usage: { prompt_tokens: 16, completion_tokens: 300, cached_tokens: 0 },
    // 16 × 0.11 = 1.76 + 300 × 0.44 = 132 → 133.76 → 134
    costMicros: 134,
    toolNames: [],
  },
  {
    fixture: 'openai-compatible-deepseek-stream-tool-call.chunks.txt',
    model: 'deepseek/reasoner',
    format: 'openai',
    path: UPSTREAM.deepseek,
    content: null,
    toolCalls: [
      { id: 'call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', name: 'weather', arguments: '{"location": "San Francisco"}' },
    ],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 339, completion_tokens: 83, cached_tokens: 320 },
    // (339 − 320) × 0.55 = 10.45 + 320 × 0.14 = 44.8 + 83 × 2.19 = 181.77 → 237.02 → 238
    costMicros: 238,
    toolNames: ['weather'],
  },
  {
    fixture: 'openai-compatible-groq-stream-tool-call.chunks.txt',
    model: 'groq/llama',
    format: 'openai',
    path: UPSTREAM.groq,
    content: null,
    toolCalls: [{ id: 'tk85n1k4m', name: 'weather', arguments: '{}' }],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 210, completion_tokens: 15, cached_tokens: 0 },
    // 210 × 0.59 = 123.9 + 15 × 0.79 = 11.85 → 135.75 → 136
    costMicros: 136,
    toolNames: ['weather'],
  },
  {
    fixture: 'anthropic-stream-text-then-tool-use.sse',
    model: 'acme/claude',
    format: 'anthropic',
    path: UPSTREAM.anthropic,
    content: "I'll check the current weather in Paris for you.",
    toolCalls: [
      { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' },
    ],
    finishReason: 'tool_calls',
    // input 377 (message_start; message_delta carries output_tokens only), output 65
    usage: { prompt_tokens: 377, completion_tokens: 65, cached_tokens: 0 },
    // 377 × 3 = 1131 + 65 × 15 = 975 → 2106
    costMicros: 2106,
    toolNames: ['get_weather'],
  },
  {
    fixture: 'anthropic-stream-text-then-tool-use.chunks.txt',
    model: 'acme/claude',
    format: 'anthropic',
    path: UPSTREAM.anthropic,
    content: "I'll invoke the JSON response tool.",
    toolCalls: [
      {
        id: 'toolu_01KFbKqPYSuAKujiL6mTfzYA',
        name: 'json',
        arguments: '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}',
      },
    ],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 849, completion_tokens: 47, cached_tokens: 0 },
    // 849 × 3 = 2547 + 47 × 15 = 705 → 3252
    costMicros: 3252,
    toolNames: ['json'],
  },
  {
    fixture: 'anthropic-stream-tool-use-no-args.chunks.txt',
    model: 'acme/claude',
    format: 'anthropic',
    path: UPSTREAM.anthropic,
    content: "I'll update the issue list for you.",
    // The recorded tool_use has only `partial_json: ""`: the arguments must become "{}".
    toolCalls: [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' }],
    finishReason: 'tool_calls',
    usage: { prompt_tokens: 565, completion_tokens: 48, cached_tokens: 0 },
    // 565 × 3 = 1695 + 48 × 15 = 720 → 2415
    costMicros: 2415,
    toolNames: ['updateIssueList'],
  },
  {
    fixture: 'anthropic-stream-cache-read.chunks.txt',
    model: 'acme/claude',
    format: 'anthropic',
    path: UPSTREAM.anthropic,
    content: 'OK',
    toolCalls: [],
    finishReason: 'length',
    // input 3 + cache read 18639 (+ cache write 0) = 18642 prompt tokens, 18639 of them cached
    usage: { prompt_tokens: 18_642, completion_tokens: 1, cached_tokens: 18_639 },
    // 3 × 3 = 9 + 18639 × 0.30 = 5591.7 + 1 × 15 = 15 → 5615.7 → 5616
    costMicros: 5616,
    toolNames: [],
    prompt: LONG_PROMPT,
  },
  {
    fixture: 'anthropic-stream-cache-write.chunks.txt',
    model: 'acme/claude',
    format: 'anthropic',
    path: UPSTREAM.anthropic,
    content: 'OK',
    toolCalls: [],
    finishReason: 'length',
    // input 3 + cache read 0 + cache write 18639 = 18642 prompt tokens, none read from cache
    usage: { prompt_tokens: 18_642, completion_tokens: 1, cached_tokens: 0 },
    // 3 × 3 = 9 + 18639 × 3.75 (cache_write) = 69896.25 + 1 × 15 = 15 → 69920.25 → 69921
    costMicros: 69_921,
    toolNames: [],
    prompt: LONG_PROMPT,
  },
];

/** A minimal tool declaration in the common format. */
export function toolDeclaration(name: string) {
  return {
    type: 'function' as const,
    function: {
      name,
      description: `The ${name} tool`,
      parameters: { type: 'object', properties: {}, additionalProperties: true },
    },
  };
}
