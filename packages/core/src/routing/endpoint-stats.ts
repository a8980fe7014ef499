/** Recent performance of one endpoint, as `provider.sort` uses it. */
export interface EndpointObservation {
  /** Smoothed time to first byte of the answer, in ms. */
  latencyMs: number;
  /** Smoothed completion tokens per second after the first byte; null until a completion was long enough to tell. */
  tokensPerSecond: number | null;
}

/** Endpoint key: `<provider id>/<upstream model>`. */
type EndpointKey = string;

const SMOOTHING = 0.2;

/**
 * What the gateway has seen of each endpoint lately: an exponentially weighted moving average per
 * endpoint, in process memory (observations are hints for ordering, not records).
 */
export class EndpointStats {
  private readonly byEndpoint = new Map<EndpointKey, EndpointObservation>();

  get(key: EndpointKey): EndpointObservation | undefined {
    return this.byEndpoint.get(key);
  }

  /** Records one served request: time to first byte and, when measurable, generation speed. */
  observe(key: EndpointKey, latencyMs: number, completionTokens: number, generationMs: number): void {
    const speed = completionTokens >= 8 && generationMs > 0 ? (completionTokens * 1000) / generationMs : null;
    const previous = this.byEndpoint.get(key);
    if (!previous) {
      this.byEndpoint.set(key, { latencyMs, tokensPerSecond: speed });
      return;
    }
    previous.latencyMs += SMOOTHING * (latencyMs - previous.latencyMs);
    if (speed !== null) {
      previous.tokensPerSecond =
        previous.tokensPerSecond === null
          ? speed
          : previous.tokensPerSecond + SMOOTHING * (speed - previous.tokensPerSecond);
    }
  }
}

export function endpointKey(providerId: string, upstreamModel: string): EndpointKey {
  return `${providerId}/${upstreamModel}`;
}
