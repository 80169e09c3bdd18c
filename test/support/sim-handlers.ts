// The simulator's API without HTTP: a route's handler called on a SimState, a refusal returned
// as the answer the API would give. For unit tests of what the simulated API takes and refuses.
import { API_ROUTES, type ApiResult, type RequestContext } from '../../src/sim/api.js';
import type { Dict } from '../../src/sim/fields.js';
import { validateSeed } from '../../src/sim/seed.js';
import { SimState } from '../../src/sim/state.js';

/** The answer of route `method pattern` (as API_ROUTES spells it) to `body`; throws for an unknown route. */
export function callRoute(state: SimState, method: string, pattern: string, body: Dict = {}, params: Record<string, string> = {}): ApiResult {
  const route = API_ROUTES.find((r) => r.method === method && r.pattern === pattern);
  if (route === undefined) throw new Error(`no route ${method} ${pattern}`);
  const ctx: RequestContext = { state, params, body, query: [], lbProvisionMs: 0, serverActionMs: 0 };
  try {
    return route.handle(ctx);
  } catch (error) {
    // Refusals are thrown as ApiError with the status and body the API would answer.
    const refused = error as { status?: number; body?: unknown };
    if (refused.status === undefined) throw error;
    return { status: refused.status, body: refused.body };
  }
}

/** A simulated cloud with nothing in it but the public networks. */
export function emptyCloud(): SimState {
  return new SimState('http://127.0.0.1:1', validateSeed({}, 'seed'));
}
