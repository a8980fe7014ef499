import type { ChatMessage } from '../../providers/chat-types.js';

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

/**
 * The largest attachment of a conversation in characters as sent (a `data:` URL or base64 text is
 * ASCII, so characters are bytes): image URLs that are `data:` URLs, `input_audio.data` and
 * `file.file_data`. A plain `https:` image URL is not an attachment the caller uploads.
 */
export function largestAttachment(messages: readonly ChatMessage[]): number {
  let largest = 0;
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!part || typeof part !== 'object') continue;
      for (const text of attachedTexts(part as Record<string, unknown>)) {
        largest = Math.max(largest, text.length);
      }
    }
  }
  return largest;
}

function attachedTexts(part: Record<string, unknown>): string[] {
  const field = (holder: unknown, name: string) =>
    holder && typeof holder === 'object' ? (holder as Record<string, unknown>)[name] : undefined;
  const texts: string[] = [];
  const url = field(part.image_url, 'url');
  if (typeof url === 'string' && url.startsWith('data:')) texts.push(url);
  for (const value of [field(part.input_audio, 'data'), field(part.file, 'file_data')]) {
    if (typeof value === 'string') texts.push(value);
  }
  return texts;
}
