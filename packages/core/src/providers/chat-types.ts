/**
 * The OpenAI chat-completions wire shapes the gateway speaks to its callers. Only the fields the
 * gateway reads are typed; everything else passes through untouched (`[field: string]: unknown`).
 */

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  /** A string, an array of content parts, or null (assistant turns that only call tools). */
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  [field: string]: unknown;
}

export type ChatContentPart =
  | { type: 'text'; text: string; [field: string]: unknown }
  | { type: 'image_url'; image_url: { url: string; detail?: string }; [field: string]: unknown }
  | { type: string; [field: string]: unknown };

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** A chat-completions request body as the caller sent it (after shallow validation). */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  [field: string]: unknown;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [field: string]: unknown };
  [field: string]: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      tool_calls?: ChatToolCall[];
      [field: string]: unknown;
    };
    finish_reason: string | null;
    [field: string]: unknown;
  }[];
  usage?: ChatUsage;
  [field: string]: unknown;
}

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      tool_calls?: ChatToolCallDelta[];
      [field: string]: unknown;
    };
    finish_reason: string | null;
    [field: string]: unknown;
  }[];
  usage?: ChatUsage | null;
  [field: string]: unknown;
}

/** Token counts as the gateway meters them, whatever the provider's wire format. */
export interface TokenUsage {
  /** All prompt tokens, cached ones included. */
  promptTokens: number;
  /** Prompt tokens read from the provider's cache (a subset of `promptTokens`). */
  cachedTokens: number;
  /** Prompt tokens written to the provider's cache (a subset of `promptTokens`; Anthropic only). */
  cacheWriteTokens: number;
  completionTokens: number;
}
