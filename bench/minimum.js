// The fewest cloudscale API requests each measured pass can take, route by route, so the
// benchmark shows not only a total but where any request above the minimum comes from.
//
// A pass must read the state of every resource kind it manages once (servers, load balancers,
// pools, listeners, health monitors, Floating IPs: one list each, tag filters cannot narrow a
// kind to "ours" without hiding foreign objects that clash), the subnets (the annotations'
// subnets must exist before anything is written), the members of every existing pool (the API
// has no list of all members), and then write exactly the differences.

/** The cloud lists of one pass, by route. */
export const CLOUD_LISTS = [
  'GET /v1/servers',
  'GET /v1/load-balancers',
  'GET /v1/load-balancers/pools',
  'GET /v1/load-balancers/listeners',
  'GET /v1/load-balancers/health-monitors',
  'GET /v1/floating-ips',
  'GET /v1/subnets',
];

const MEMBER_LIST = 'GET /v1/load-balancers/pools/{uuid}/members';

/**
 * Counts of the objects one set of Services needs.
 * @param {readonly { ports: number }[]} services
 * @param {number} nodes members per pool
 */
export function shapeOf(services, nodes) {
  const pools = services.reduce((sum, s) => sum + s.ports, 0);
  return { services: services.length, pools, members: pools * nodes, listeners: pools, monitors: pools };
}

/**
 * Full converge from an empty cloud: the lists (no pool exists yet, so no member list), every
 * creation, and one more load-balancer list to see the new load balancers leave `changing` (a
 * create answers while it is still provisioning; the children are created once it is `running`;
 * one list shows every new load balancer at once, where reading each by UUID takes one each).
 * @param {ReturnType<typeof shapeOf>} shape
 */
export function convergeMinimum(shape) {
  return minimum({
    ...lists(),
    'GET /v1/load-balancers': shape.services > 0 ? 2 : 1,
    'POST /v1/load-balancers': shape.services,
    'POST /v1/load-balancers/pools': shape.pools,
    'POST /v1/load-balancers/pools/{uuid}/members': shape.members,
    'POST /v1/load-balancers/listeners': shape.listeners,
    'POST /v1/load-balancers/health-monitors': shape.monitors,
  });
}

/**
 * A pass with nothing to do: the lists and one member list per pool, whatever the number of Services.
 * @param {ReturnType<typeof shapeOf>} shape
 */
export function noopMinimum(shape) {
  return minimum({ ...lists(), [MEMBER_LIST]: shape.pools });
}

/**
 * One listener attribute changed on every Service (a timeout annotation): the reads of a no-op
 * pass and one PATCH per listener.
 * @param {ReturnType<typeof shapeOf>} shape
 */
export function listenerChangeMinimum(shape) {
  return minimum({ ...lists(), [MEMBER_LIST]: shape.pools, 'PATCH /v1/load-balancers/listeners/{uuid}': shape.listeners });
}

/** init-nodes: one server list, whatever the number of nodes. */
export function initNodesMinimum() {
  return minimum({ 'GET /v1/servers': 1 });
}

/**
 * Requests per route above (or below) the minimum; routes that match it are left out.
 * @param {Readonly<Record<string, number>>} actualByRoute
 * @param {{ byRoute: Readonly<Record<string, number>> }} expected
 * @returns {Record<string, number>}
 */
export function differenceByRoute(actualByRoute, expected) {
  const routes = new Set([...Object.keys(actualByRoute), ...Object.keys(expected.byRoute)]);
  const difference = {};
  for (const route of [...routes].sort()) {
    const delta = (actualByRoute[route] ?? 0) - (expected.byRoute[route] ?? 0);
    if (delta !== 0) difference[route] = delta;
  }
  return difference;
}

function lists() {
  return Object.fromEntries(CLOUD_LISTS.map((route) => [route, 1]));
}

/** @param {Record<string, number>} byRoute */
function minimum(byRoute) {
  const entries = Object.entries(byRoute).filter(([, count]) => count > 0);
  const reads = entries.filter(([route]) => route.startsWith('GET ')).reduce((sum, [, count]) => sum + count, 0);
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  return { total, reads, writes: total - reads, byRoute: Object.fromEntries(entries) };
}
