import { authorizePreviewRoute, authorizeRoute } from './authorize-route.js';
import { oauthClientsRoutes } from './oauth-clients-routes.js';
import { tokenRoute } from './token-route.js';

/**
 * The `/v1` OAuth routes: client registration, approval (authorize, and its preview) and the token endpoint. The
 * metadata document is served outside `/v1` (`oauthMetadataRoute`, with the system routes).
 */
export const oauthRoutes = [...oauthClientsRoutes, authorizePreviewRoute, authorizeRoute, tokenRoute];
