import { z } from 'zod';
import type { OAuthClient } from '../../storage/types.js';

export const oauthClientViewSchema = z
  .object({
    client_id: z.string(),
    name: z.string(),
    redirect_uris: z.array(z.string()),
    created_at: z.string(),
  })
  .meta({ id: 'OAuthClient' });

/** A client as the API shows it: never its secret, nor the secret's hash. Times in ISO 8601. */
export function oauthClientView(client: OAuthClient): z.output<typeof oauthClientViewSchema> {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    created_at: new Date(client.createdAt).toISOString(),
  };
}
