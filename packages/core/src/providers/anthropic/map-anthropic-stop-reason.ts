/** The OpenAI `finish_reason` values an Anthropic answer can map to. */
type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** The stop reasons the Messages API documents. */
type AnthropicStopReason =
  | 'end_turn'
  | 'stop_sequence'
  | 'max_tokens'
  | 'model_context_window_exceeded'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal';

// A `Record` over the union: adding a stop reason above without a mapping fails the typecheck.
const FINISH_REASONS: Record<AnthropicStopReason, OpenAIFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  // The answer filled the context window: cut short, like max_tokens.
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  // A server-tool loop paused; the turn is over as far as a chat-completions caller can tell.
  pause_turn: 'stop',
  refusal: 'content_filter',
};

/** Anthropic `stop_reason` → OpenAI `finish_reason`; a missing or unknown reason reads as `stop`. */
export function mapAnthropicStopReason(reason: string | null | undefined): OpenAIFinishReason {
  if (reason != null && Object.hasOwn(FINISH_REASONS, reason)) {
    return FINISH_REASONS[reason as AnthropicStopReason];
  }
  return 'stop';
}
