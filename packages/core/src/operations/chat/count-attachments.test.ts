import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../providers/chat-types.js';
import { countAttachments, largestAttachment } from './count-attachments.js';

const image = (url: string) => ({ type: 'image_url', image_url: { url } });

describe('largestAttachment', () => {
  it('measures data: URLs, input_audio and file_data on their text as sent, and picks the largest', () => {
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x'.repeat(1_000) },
          image(`data:image/png;base64,${'A'.repeat(50)}`),
        ],
      },
      {
        role: 'user',
        content: [{ type: 'input_audio', input_audio: { data: 'B'.repeat(80), format: 'wav' } }],
      },
      { role: 'user', content: [{ type: 'file', file: { file_data: 'C'.repeat(30), filename: 'a.pdf' } }] },
    ];
    expect(largestAttachment(messages)).toBe(80);
    expect(countAttachments(messages)).toEqual({ image_url: 1, input_audio: 1, file: 1 });
  });

  it('an https image URL and plain text are not attachments', () => {
    expect(
      largestAttachment([
        { role: 'user', content: [image(`https://example.test/${'p'.repeat(500)}.png`)] },
        { role: 'user', content: 'y'.repeat(10_000) },
      ]),
    ).toBe(0);
  });
});
