import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '../../providers/chat-types.js';
import { invalidField } from './invalid-field.js';

type Json = Record<string, unknown>;

/** The conversation a Responses `input` (and `instructions`) becomes on a chat call. */
interface ConvertedInput {
  messages: ChatMessage[];
  /** False when an item had no chat equivalent and was left out (`reasoning`, hosted tool calls). */
  lossless: boolean;
}

const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);

/**
 * The chat messages of a Responses request (product.md "Request"): `instructions` as a leading
 * system message; a string `input` as one user message; items in order — `message` items by role
 * (`input_text`, `output_text` and `refusal` parts as text, `input_image` as `image_url`,
 * `input_file` as a `file` part), `function_call` and `custom_tool_call` items as tool calls of
 * the assistant turn they follow (a new one when they follow no assistant turn),
 * `function_call_output` and `custom_tool_call_output` as `tool` messages. A `reasoning` item, or a
 * hosted tool's item, has no chat form and is left out. An `item_reference` needs stored state the
 * gateway does not keep: `400 invalid_request`, as is an item missing what it must carry.
 */
export function convertInput(
  input: string | Json[],
  instructions: string | null | undefined,
): ConvertedInput {
  const messages: ChatMessage[] = [];
  if (typeof instructions === 'string' && instructions !== '') {
    messages.push({ role: 'system', content: instructions });
  }
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return { messages, lossless: true };
  }
  let lossless = true;
  for (const [i, item] of input.entries()) {
    const at = `input[${i}]`;
    if (!item || typeof item !== 'object' || Array.isArray(item)) throw invalidField(at, 'must be an object');
    const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
    switch (type) {
      case 'message':
        messages.push(messageOf(item, at));
        break;
      case 'function_call':
      case 'custom_tool_call':
        addToolCall(messages, toolCallOf(item, at));
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
        messages.push({
          role: 'tool',
          tool_call_id: requiredString(item, 'call_id', at),
          content: toolOutput(item.output, `${at}.output`),
        });
        break;
      case 'item_reference':
        throw new GatewayError(
          'invalid_request',
          `Invalid request body. body.${at}: item_reference needs stored items; this gateway is stateless and keeps none, so send the full item instead.`,
        );
      default:
        if (typeof type !== 'string') throw invalidField(`${at}.type`, 'must be a string');
        lossless = false;
    }
  }
  return { messages, lossless };
}

function messageOf(item: Json, at: string): ChatMessage {
  const role = item.role;
  if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) {
    throw invalidField(`${at}.role`, 'must be one of user, assistant, system, developer');
  }
  const { content } = item;
  if (typeof content === 'string') return { role: role as ChatMessage['role'], content };
  if (!Array.isArray(content)) throw invalidField(`${at}.content`, 'must be a string or an array of parts');
  const parts = content.map((part, j) => contentPart(part, `${at}.content[${j}]`));
  // Assistant, system and developer turns are text on every chat upstream: their parts joined.
  if (role !== 'user' && parts.every((part) => part.type === 'text')) {
    return { role: role as ChatMessage['role'], content: parts.map((part) => part.text).join('') };
  }
  return { role: role as ChatMessage['role'], content: parts };
}

function contentPart(part: unknown, at: string): ChatContentPart {
  if (!part || typeof part !== 'object') throw invalidField(at, 'must be an object');
  const p = part as Json;
  switch (p.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: requiredString(p, 'text', at) };
    case 'refusal':
      return { type: 'text', text: requiredString(p, 'refusal', at) };
    case 'input_image': {
      if (typeof p.image_url !== 'string') {
        throw invalidField(
          `${at}.image_url`,
          'must be a URL or a data: URL (images by file_id need stored files, which this gateway does not keep)',
        );
      }
      const image: { url: string; detail?: string } = { url: p.image_url };
      if (typeof p.detail === 'string') image.detail = p.detail;
      return { type: 'image_url', image_url: image };
    }
    case 'input_file': {
      const file: Json = {};
      for (const field of ['file_data', 'file_id', 'filename'] as const) {
        if (typeof p[field] === 'string') file[field] = p[field];
      }
      if (file.file_data === undefined && file.file_id === undefined) {
        throw invalidField(`${at}.file_data`, 'must be a string (or give file_id)');
      }
      return { type: 'file', file };
    }
    default:
      throw invalidField(
        `${at}.type`,
        'must be one of input_text, input_image, input_file, output_text, refusal',
      );
  }
}

function toolCallOf(item: Json, at: string): ChatToolCall {
  const name = requiredString(item, 'name', at);
  const args =
    item.type === 'custom_tool_call'
      ? JSON.stringify({ input: requiredString(item, 'input', at) })
      : requiredString(item, 'arguments', at);
  return { id: requiredString(item, 'call_id', at), type: 'function', function: { name, arguments: args } };
}

/** A tool call joins the assistant turn it follows, so its result can follow that turn on the chat wire. */
function addToolCall(messages: ChatMessage[], call: ChatToolCall): void {
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    return;
  }
  messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

/** A tool's output: a string as it is; content parts as chat parts (text, images). */
function toolOutput(output: unknown, at: string): string | ChatContentPart[] {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw invalidField(at, 'must be a string or an array of parts');
  const parts = output.map((part, j) => contentPart(part, `${at}[${j}]`));
  return parts.every((part) => part.type === 'text') ? parts.map((part) => part.text).join('') : parts;
}

function requiredString(item: Json, field: string, at: string): string {
  const value = item[field];
  if (typeof value !== 'string') throw invalidField(`${at}.${field}`, 'must be a string');
  return value;
}
