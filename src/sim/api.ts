// The API v1 subset the simulator serves: every route, in matching order.

import { floatingIpRoutes, networkRoutes } from './routes-cloud.js';
import { serverRoutes } from './routes-servers.js';
import { listenerRoutes, loadBalancerRoutes, memberRoutes, monitorRoutes, poolRoutes } from './routes-lb.js';
import type { Route } from './routing.js';

export { serverAction } from './routes-servers.js';
export { matchesTagFilters, type ApiResult, type RequestContext, type Route } from './routing.js';

/** Every API route. Literal segments win over parameters (`/pools` is not an LB UUID). */
export const API_ROUTES: readonly Route[] = [
  ...serverRoutes,
  ...networkRoutes,
  ...floatingIpRoutes,
  ...poolRoutes,
  ...memberRoutes,
  ...listenerRoutes,
  ...monitorRoutes,
  ...loadBalancerRoutes,
];
