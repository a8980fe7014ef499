/** Who may call a route: nobody needs a key, any key, or a key of one scope. */
export type RouteAccess = 'public' | 'any' | 'inference' | 'provisioning';
