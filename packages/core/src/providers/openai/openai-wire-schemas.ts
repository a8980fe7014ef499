import { z } from 'zod';

/*
 * What OpenAI-format upstreams send back, checked only as far as the gateway reads it. No object
 * refuses a key it does not name: vendors add fields (`reasoning_content`, `obfuscation`, `x_groq`,
 * `service_tier`, …) and those pass through to the caller. The parsed values are used to check
 * shape only; callers keep the original JSON so field order and unknown fields survive
 * byte-for-byte in meaning.
 */

/**
 * Token counts. OpenAI reports cache reads in `prompt_tokens_details.cached_tokens`; DeepSeek also
 * (and, in older versions, only) in `prompt_cache_hit_tokens`. Groq mixes float timings in.
 */
const tokenCount = z.number().int().nonnegative();

export const openAIUsageSchema = z.looseObject({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: tokenCount.nullish() }).nullish(),
  prompt_cache_hit_tokens: tokenCount.nullish(),
});

/** The error envelope `{error:{message,type,param,code}}`; some servers send `error` as a bare string. */
export const openAIErrorEnvelopeSchema = z.looseObject({
  error: z.union([
    z.looseObject({
      message: z.string().nullish(),
      // Read by nobody here; typed loosely so an odd `param` or `code` never hides the message.
      type: z.unknown().optional(),
      param: z.unknown().optional(),
      code: z.unknown().optional(),
    }),
    z.string(),
  ]),
});

/** The top-level `message` some servers (older vLLM) use instead of the envelope. */
export const bareErrorMessageSchema = z.looseObject({ message: z.string() });

/** Of a streamed chunk, so strict about nothing and stripping (see `openAIChunkSchema`). */
const toolCallDeltaSchema = z.object({
  index: z.number().nullish(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

/**
 * One streamed chunk. `choices` may be absent (usage-only chunks of some servers) or empty (OpenAI's
 * usage chunk, Azure's prompt-filter chunk). `usage` is left unchecked here: a usage object we cannot
 * read is treated as no usage at all, never as a broken stream.
 *
 * Checked once per chunk, so its objects strip unknown keys from the parsed value instead of copying
 * them over (zod compiles that case): they accept exactly what loose objects accept, and the caller
 * passes on the original JSON, never the parsed value. Measured alone, parse and check of a real
 * OpenAI chunk: 2.5 → 2.0 µs; `npm run bench:ab -- --mode stream` (6 rounds): main thread 5,113 →
 * 4,919 µs per 300-chunk stream.
 */
export const openAIChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({ content: z.string().nullish(), tool_calls: z.array(toolCallDeltaSchema).nullish() })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.unknown().optional(),
});

/** A non-streaming response body. */
export const openAICompletionSchema = z.looseObject({
  choices: z.array(
    z.looseObject({
      index: z.number().nullish(),
      message: z.looseObject({ content: z.string().nullish() }).nullish(),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: z.unknown().optional(),
});
