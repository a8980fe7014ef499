/**
 * The OpenAI Responses wire shapes the gateway reads and writes. Only the fields the gateway reads
 * are typed; everything else is carried as it came (`[field: string]: unknown`).
 */

/** A request body of `POST /v1/responses`, after shallow validation (and a preset merged in). */
export interface ResponsesRequest {
  model: string;
  input: string | Record<string, unknown>[];
  instructions?: string | null;
  tools?: ResponsesTool[] | null;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  text?: { format?: Record<string, unknown>; [field: string]: unknown } | null;
  reasoning?: { effort?: string | null; [field: string]: unknown } | null;
  metadata?: Record<string, unknown> | null;
  stream?: boolean | null;
  [field: string]: unknown;
}

/** One entry of `tools`: a function, a custom (free-form) tool, or a hosted tool of some type. */
export interface ResponsesTool {
  type: string;
  name?: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  format?: Record<string, unknown>;
  [field: string]: unknown;
}

/** An `output_text` content part. */
export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

/** A `refusal` content part. */
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}

/** An output item the gateway writes on a translated route. */
export type OutputItem =
  | {
      type: 'message';
      id: string;
      status: ItemStatus;
      role: 'assistant';
      content: (OutputText | RefusalPart)[];
    }
  | {
      type: 'function_call';
      id: string;
      status: ItemStatus;
      call_id: string;
      name: string;
      arguments: string;
    }
  | {
      type: 'custom_tool_call';
      id: string;
      status: ItemStatus;
      call_id: string;
      name: string;
      input: string;
    };

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** The `usage` of a Response. */
export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; [field: string]: unknown };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number; [field: string]: unknown };
  total_tokens: number;
}

/** A Response object (`object: "response"`). */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: string;
  model: string;
  output: Record<string, unknown>[];
  usage: ResponsesUsage | null;
  [field: string]: unknown;
}
