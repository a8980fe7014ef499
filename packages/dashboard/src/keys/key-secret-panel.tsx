import { useState } from 'preact/hooks';

interface Props {
  name: string;
  secret: string;
  onDone: () => void;
}

/** The new key's secret, shown once: copy it, then Done forgets it for good. */
export function KeySecretPanel({ name, secret, onDone }: Props) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  }

  return (
    <section class="secret-panel" aria-label="New key secret">
      <h2>Key “{name}” created</h2>
      <p>Copy the key now: it is shown only once and cannot be shown again.</p>
      <code class="secret" data-testid="key-secret">
        {secret}
      </code>
      <div class="actions">
        <button type="button" data-testid="key-secret-copy" onClick={copy}>
          Copy
        </button>
        <button type="button" class="secondary" data-testid="key-secret-done" onClick={onDone}>
          Done
        </button>
        <span aria-live="polite" class="muted">
          {copied === 'yes' && 'Copied.'}
          {copied === 'failed' && 'Copy failed: select the key and copy it by hand.'}
        </span>
      </div>
    </section>
  );
}
