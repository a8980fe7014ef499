import type { ApiKey, Generation } from '../api/api-types.js';
import { buildQuery } from '../api/query-string.js';
import { useLoad } from '../api/use-load.js';
import { formatDuration, formatTimestamp } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { FailureTrail } from './failure-trail.js';

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** One request: what was asked and answered, what it cost, and every failed attempt before it. */
export function RequestDetailPage({ id }: { id: string }) {
  const loaded = useLoad((api) => api.get<{ data: Generation }>(`/v1/generation${buildQuery({ id })}`), [id]);
  const keys = useLoad((api) => api.get<{ data: ApiKey[] }>('/v1/keys'), []);
  const r = loaded.data?.data;
  const keyName = keys.data?.data.find((key) => key.id === r?.key_id)?.name;

  return (
    <section data-testid="request-detail">
      <p>
        <a href="#/requests">← All requests</a>
      </p>
      <h1>
        Request <code>{id}</code>
      </h1>
      <ErrorBanner message={loaded.error} />
      {loaded.loading && !r && <p class="muted">Loading…</p>}
      {r && (
        <>
          {r.error && (
            <div class="error-detail">
              <strong>{r.error.code}</strong>
              {r.error.message && `: ${r.error.message}`}
            </div>
          )}
          <div class="detail-grid">
            <dl>
              <dt>Time (UTC)</dt>
              <dd>{formatTimestamp(r.created_at)}</dd>
              <dt>Endpoint</dt>
              <dd>{r.endpoint}</dd>
              <dt>Model</dt>
              <dd>
                {r.model ?? '–'}
                {r.requested_model && r.requested_model !== r.model && ` (asked for ${r.requested_model})`}
              </dd>
              <dt>Provider</dt>
              <dd>{r.provider ?? '–'}</dd>
              <dt>Key</dt>
              <dd>{r.key_id === null ? '–' : keyName ? `${keyName} (${r.key_id})` : r.key_id}</dd>
              <dt>Status</dt>
              <dd>
                {r.status} / HTTP {r.http_status}
              </dd>
              <dt>Finish reason</dt>
              <dd>{r.finish_reason ?? '–'}</dd>
              <dt>Stream</dt>
              <dd>{yesNo(r.stream)}</dd>
              <dt>Duration / first token</dt>
              <dd>
                {formatDuration(r.duration_ms)} / {formatDuration(r.ttft_ms)}
              </dd>
              <dt>Attempts</dt>
              <dd>{r.attempts}</dd>
            </dl>
            <dl>
              <dt>Tokens in / out / cached</dt>
              <dd>
                {r.usage.prompt_tokens} / {r.usage.completion_tokens} / {r.usage.cached_tokens}
              </dd>
              <dt>Cost</dt>
              <dd>{formatMicros(r.cost_micros)}</dd>
              <dt>Saved</dt>
              <dd>{formatMicros(r.saved_micros)}</dd>
              <dt>Waived</dt>
              <dd>{r.waived ?? 'no'}</dd>
              <dt>BYOK</dt>
              <dd>{yesNo(r.byok)}</dd>
              <dt>Cache hit</dt>
              <dd>{yesNo(r.cache_hit)}</dd>
              <dt>Preset</dt>
              <dd>{r.preset ?? '–'}</dd>
              <dt>Project</dt>
              <dd>{r.project_id ?? '–'}</dd>
            </dl>
          </div>

          <h2>Failure trail</h2>
          <FailureTrail failures={r.routing.failures} />

          <h2>Guardrails</h2>
          {r.guardrails.length === 0 ? (
            <p class="muted">No guardrail fired.</p>
          ) : (
            <ul>
              {r.guardrails.map((g) => (
                <li key={`${g.rule_id}-${g.stage}`}>
                  {g.name} ({g.category}) on {g.stage}
                </li>
              ))}
            </ul>
          )}

          <h2>Labels</h2>
          <PairList pairs={Object.entries(r.metadata)} empty="No metadata labels." />

          {Object.keys(r.attachments).length > 0 && (
            <>
              <h2>Attachments</h2>
              <PairList pairs={Object.entries(r.attachments).map(([k, v]) => [k, String(v)])} empty="" />
            </>
          )}
        </>
      )}
    </section>
  );
}

function PairList({ pairs, empty }: { pairs: [string, string][]; empty: string }) {
  if (pairs.length === 0) return <p class="muted">{empty}</p>;
  return (
    <dl class="pairs">
      {pairs.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
