import type { ChatMessage } from '../providers/chat-types.js';

/** Counts the non-text content parts of a conversation by type (`image_url: 2`), for the request record. */
export function countAttachments(messages: readonly ChatMessage[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part && typeof part === 'object' && typeof part.type === 'string' && part.type !== 'text') {
        counts[part.type] = (counts[part.type] ?? 0) + 1;
      }
    }
  }
  return counts;
}
