import { estimatedUsage, type MeteredUsage, meteredUsage } from '../metering/usage.js';
import type { TokenUsage } from '../providers/chat-types.js';
import type { ChunkReading } from './inference-operation.js';

/** How a stream ended: read to its end, broken after its first byte, or cancelled by the client. */
export type StreamEnding = 'complete' | 'broken' | 'cancelled';

/**
 * What a stream delivered, for the meter. Output counts as delivered once the consumer comes back
 * for what follows it (for the Node server: once its bytes were written to the connection). The
 * chunk handed over last is unconfirmed until then: a client gone before taking it never received it.
 */
export class StreamDelivery {
  deliveredChars = 0;
  private unconfirmedChars = 0;
  producedOutput = false;
  finishReason: string | null = null;
  /** Time to the first chunk handed over, from the request's start. */
  ttftMs: number | null = null;

  /** A chunk was handed over (`elapsedMs`: since the request started, read only for the first). */
  handedOver(reading: ChunkReading, elapsedMs: () => number): void {
    this.unconfirmedChars += reading.chars;
    if (reading.produced) this.producedOutput = true;
    if (reading.finishReason) this.finishReason = reading.finishReason;
    this.ttftMs ??= elapsedMs();
  }

  /** The consumer came back: what it took last was delivered. */
  confirm(): void {
    this.deliveredChars += this.unconfirmedChars;
    this.unconfirmedChars = 0;
  }
}

/**
 * The usage a stream is charged: the provider's report of a complete stream; else estimated over
 * what was delivered (Cost rule 7); a stream cancelled before any content was delivered ("never
 * read", Cost rule 8) at the completion ceiling it was held against.
 */
export function streamUsage(
  how: StreamEnding,
  reported: TokenUsage | null,
  worst: MeteredUsage,
  deliveredChars: number,
): MeteredUsage {
  if (how === 'complete' && reported) return meteredUsage(reported);
  if (how === 'cancelled' && deliveredChars === 0) {
    return { ...estimatedUsage(worst, reported, 0), completionTokens: worst.completionTokens };
  }
  return estimatedUsage(worst, reported, deliveredChars);
}

/**
 * Forwards one pull's batch: `first`, and the chunks the upstream's reads already hold after it, in
 * one write; before any output, only up to the first chunk with output (the time to the first token
 * waits for nothing after it). `forward` returns false to stop (an output guardrail fired); so does
 * this, and nothing after that chunk is taken.
 */
export function forwardBatch(
  first: unknown,
  takeReady: ((max?: number) => unknown[]) | null,
  forward: (chunk: unknown) => boolean,
  produced: () => boolean,
): boolean {
  const afterOutput = produced();
  let forwarded = forward(first);
  if (forwarded && takeReady && afterOutput) {
    for (const chunk of takeReady()) {
      forwarded = forward(chunk);
      if (!forwarded) break;
    }
  }
  while (forwarded && takeReady && !produced()) {
    const [chunk] = takeReady(1);
    if (chunk === undefined) break;
    forwarded = forward(chunk);
  }
  return forwarded;
}
