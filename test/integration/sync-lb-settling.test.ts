// A delete takes a moment to settle on the real API (docs/cloudscale-api.md, "A delete settles"):
// until it has, what it freed — a port, a member's address and port, a pool's monitor — is still
// taken and a create that needs it answers 400. A pass re-creating what was deleted outside it
// moments ago (by hand, or by a pass that was stopped) meets that refusal and sends the create
// again until the delete settled.
import { describe, expect, it } from 'vitest';
import { createLoadBalancerService, uniqueName } from '../support/kube.js';
import { expectConverged, expectWellFormed, memberNames, passOk, poolOf, routes, theLb, useLbWorld } from '../support/lb-scenarios.js';
import { awaitSteady, writesTaken } from '../support/strict-world.js';

const prefix = uniqueName('lb-settle');
const namespace = uniqueName('lb-settle');
const { harness } = useLbWorld({ prefix, namespace });
const pass = { namespace };

/** How long a delete stays unsettled here, in the test's time whatever the world's time scale. */
const SETTLE_MS = 4_000;

describe('sync-lb: deletes that settle', () => {
  it('a member, listener and monitor deleted by hand moments before the pass are re-created once their deletes settled', async () => {
    const { timeScale } = harness.sim.admin.world();
    harness.sim.admin.setDataPlane({
      deletesHoldUntilPropagated: true,
      propagationMs: { member: SETTLE_MS / timeScale, delete: SETTLE_MS / timeScale },
    });
    const service = await createLoadBalancerService(namespace, 'by-hand', {
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'https', protocol: 'TCP', port: 443 },
      ],
    });
    await passOk(harness, ['by-hand'], pass);
    const before = await awaitSteady(harness, (await theLb(harness, service)).lb.uuid);
    const http = poolOf(before, 'tcp/http');
    const https = poolOf(before, 'tcp/https');
    await harness.cloud.deleteByHref(http.listeners[0]!.href);
    await harness.cloud.deleteByHref(https.members[0]!.href);
    await harness.cloud.deleteByHref(https.monitors[0]!.href);

    const { simWrites } = await passOk(harness, ['by-hand'], pass);
    // The pass met the deletes unsettled (else this test would show nothing) …
    expect(simWrites.filter((w) => w.status === 400).length, 'creates refused while the deletes settled').toBeGreaterThan(0);
    // … and created each object once the API took it.
    expect(routes(writesTaken(simWrites)).sort()).toEqual(
      ['POST /v1/load-balancers/listeners', 'POST /v1/load-balancers/pools/{uuid}/members', 'POST /v1/load-balancers/health-monitors'].sort(),
    );
    const after = await theLb(harness, service);
    expectWellFormed(after);
    expect(poolOf(after, 'tcp/http').listeners).toHaveLength(1);
    expect(poolOf(after, 'tcp/https').monitors).toHaveLength(1);
    expect(memberNames(poolOf(after, 'tcp/https'))).toEqual(memberNames(https));
    await expectConverged(harness, ['by-hand'], pass);
  });
});
