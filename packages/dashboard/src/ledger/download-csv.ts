import type { ApiClient } from '../api/api-client.js';

/**
 * Fetches the request export (it needs the Authorization header, so a plain link cannot) and saves
 * it through a temporary Blob URL, revoked once the download has started.
 */
export async function downloadRequestsCsv(api: ApiClient, days: number): Promise<void> {
  const blob = await api.getBlob(`/v1/generations/export?days=${days}`);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `tollgate-requests-${days}d.csv`;
  link.hidden = true;
  document.body.append(link);
  try {
    link.click();
  } finally {
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}
