// @kube-versions: all — Node patches the server validates (providerID once, taints), field managers, Events
// init-nodes against a real kube-apiserver and the simulator: every "must work" bullet of
// issue 4. Each test seeds its own simulator with servers named after its own uniquely named
// Nodes, runs passes restricted to its nodes (by name or by a per-test label), and deletes its
// Nodes afterwards.
import type { V1Node } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterEach, describe, expect, test } from 'vitest';
import type { CommandContext, OutputFormat } from '../../src/commands/context.js';
import { initNodesCommand, type InitNodesOptions, type InitNodesResult } from '../../src/commands/init-nodes.js';
import { planNodePass } from '../../src/core/apply/node-pass.js';
import { createCloudscaleClient } from '../../src/core/cloudscale/client.js';
import { createWriteFence } from '../../src/core/fence.js';
import { PartialFailureError, UsageError } from '../../src/core/errors.js';
import type { KubeConnection } from '../../src/core/kube/connection.js';
import { startSimulator, type SimSeed, type Simulator } from '../../src/sim/index.js';
import {
  createNode as createTestNode,
  deleteCreatedObjects,
  NOT_READY_TAINT_KEY,
  testConnection,
  uniqueName,
} from '../support/kube.js';
import { testSimWorld } from '../support/sim-world.js';

const UNINIT = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
const SHUTDOWN_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
const DEDICATED = { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' };

const kube: KubeConnection = testConnection();
const simulators: Simulator[] = [];

afterEach(async () => {
  for (const sim of simulators.splice(0)) await sim.stop();
  await deleteCreatedObjects();
});

// ---- fixtures -------------------------------------------------------------------------------

const NETWORK = { name: 'cluster-net', zone: 'rma1', subnets: [{ cidr: '10.20.0.0/24' }] };

interface ServerSpec {
  name: string;
  uuid?: string;
  zone?: string;
  status?: 'running' | 'stopped';
  host: number;
}

function seedOf(servers: ServerSpec[]): SimSeed {
  return {
    networks: [NETWORK],
    servers: servers.map((s) => ({
      name: s.name,
      ...(s.uuid === undefined ? {} : { uuid: s.uuid }),
      flavor: 'flex-4-2',
      zone: s.zone ?? 'rma1',
      status: s.status ?? 'running',
      interfaces: [
        { type: 'public' as const, addresses: [`203.0.113.${s.host}`, `2001:db8::${s.host}`] },
        { type: 'private' as const, network: NETWORK.name, addresses: [`10.20.0.${s.host}`] },
      ],
    })),
  };
}

async function simulator(servers: ServerSpec[]): Promise<Simulator> {
  const sim = await startSimulator({ seed: seedOf(servers), serverActionMs: 0, ...testSimWorld() });
  simulators.push(sim);
  return sim;
}

/** A Node as kubelet would register it; Ready unless said otherwise. */
function createNode(
  name: string,
  spec: Parameters<typeof createTestNode>[1] = {},
): ReturnType<typeof createTestNode> {
  return createTestNode(name, { ready: true, ...spec });
}

const readNode = (name: string): Promise<V1Node> => kube.core.readNode({ name });

async function nodeExists(name: string): Promise<boolean> {
  try {
    await readNode(name);
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return false;
    throw error;
  }
}

async function eventsOf(name: string): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await kube.core.listEventForAllNamespaces({
    fieldSelector: `involvedObject.kind=Node,involvedObject.name=${name}`,
  });
  return list.items.map((e) => ({ type: e.type ?? '', reason: e.reason ?? '', message: e.message ?? '' }));
}

interface Run {
  result?: InitNodesResult;
  error?: unknown;
  stdout: string;
  stderr: string;
}

async function run(
  sim: Simulator,
  nodeNames: string[],
  options: Partial<InitNodesOptions> = {},
  output: OutputFormat = 'text',
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const writeFence = createWriteFence();
  const client = createCloudscaleClient({ baseUrl: sim.url, token: 'test-token', retry: { limit: 0 }, fence: writeFence });
  const ctx: CommandContext = {
    globals: { output, color: false, verbose: false },
    writeFence,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    signal: new AbortController().signal,
    kube: () => ({ ...kube, fence: writeFence }),
    cloudscale: async () => client,
    clusterId: async () => 'test-cluster',
    kubeSystemUid: async () => 'test-kube-system-uid',
    readStdin: async () => '',
    interactive: false,
    confirm: async () => false,
  };
  try {
    const result = await initNodesCommand(nodeNames, { dryRun: false, ...options }, ctx);
    return { result, stdout, stderr };
  } catch (error) {
    return { error, stdout, stderr };
  }
}

function serverUuid(sim: Simulator, name: string): Promise<string> {
  return fetch(`${sim.url}/v1/servers`)
    .then((r) => r.json() as Promise<{ name: string; uuid: string }[]>)
    .then((servers) => {
      const found = servers.find((s) => s.name === name);
      if (found === undefined) throw new Error(`no server ${name}`);
      return found.uuid;
    });
}

/** The apiserver's admission adds this to every new Node; it is not ours to judge. */
const ADMISSION_TAINT = NOT_READY_TAINT_KEY;
const taintKeys = (node: V1Node): string[] =>
  (node.spec?.taints ?? []).map((t) => t.key).filter((key) => key !== ADMISSION_TAINT);

function serverRequests(sim: Simulator): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of sim.admin.requestSummary()) {
    if (entry.route.startsWith('/v1/servers')) counts[`${entry.method} ${entry.route}`] = entry.count;
  }
  return counts;
}

// ---- initialisation -------------------------------------------------------------------------

describe('initialisation', () => {
  test('a tainted node gets providerID, labels, addresses; only the uninitialized taint goes', async () => {
    const name = uniqueName('init');
    const sim = await simulator([{ name, host: 11 }]);
    const uuid = await serverUuid(sim, name);
    await createNode(name, { taints: [UNINIT, DEDICATED], ready: false });
    const before = await readNode(name);
    const othersBefore = before.spec?.taints?.filter((t) => t.key !== UNINIT.key);
    expect(othersBefore?.map((t) => t.key)).toEqual([DEDICATED.key, ADMISSION_TAINT]);

    sim.admin.resetRequests();
    const { result, error, stdout } = await run(sim, [name]);

    expect(error).toBeUndefined();
    expect(stdout).toBe(
      `node/${name} initialized: providerID cloudscale://${uuid}, zone rma1, 4 addresses\n`,
    );
    expect(result?.nodes[0]?.outcome).toBe('initialized');
    const node = await readNode(name);
    expect(node.spec?.providerID).toBe(`cloudscale://${uuid}`);
    expect(node.metadata?.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'flex-4-2',
      'beta.kubernetes.io/instance-type': 'flex-4-2',
      'topology.kubernetes.io/zone': 'rma1',
      'failure-domain.beta.kubernetes.io/zone': 'rma1',
      'topology.kubernetes.io/region': 'rma',
      'failure-domain.beta.kubernetes.io/region': 'rma',
    });
    expect(node.status?.addresses).toEqual([
      { type: 'Hostname', address: name },
      { type: 'ExternalIP', address: '203.0.113.11' },
      { type: 'ExternalIP', address: '2001:db8::11' },
      { type: 'InternalIP', address: '10.20.0.11' },
    ]);
    // Every other taint is kept exactly, timeAdded included.
    expect(node.spec?.taints).toEqual(othersBefore);
    expect(await eventsOf(name)).toContainEqual(
      expect.objectContaining({ type: 'Normal', reason: 'Synced' }),
    );
    // One server list for the pass: the node had no providerID, so a name lookup was needed.
    expect(serverRequests(sim)).toEqual({ 'GET /v1/servers': 1 });
  });

  test('a provided node IP puts that address first and drops the other InternalIPs', async () => {
    const name = uniqueName('nodeip');
    const sim = await simulator([{ name, host: 12 }]);
    await createNode(name, {
      taints: [UNINIT],
      annotations: { 'alpha.kubernetes.io/provided-node-ip': '10.20.0.12' },
    });
    const { error } = await run(sim, [name]);
    expect(error).toBeUndefined();
    const node = await readNode(name);
    expect(node.status?.addresses?.[0]).toEqual({ type: 'InternalIP', address: '10.20.0.12' });
    expect(taintKeys(node)).toEqual([]);
  });

  test('a provided node IP the server lacks keeps the taint, with a Warning event, exit non-zero', async () => {
    const name = uniqueName('badip');
    const sim = await simulator([{ name, host: 13 }]);
    await createNode(name, {
      taints: [UNINIT],
      annotations: { 'alpha.kubernetes.io/provided-node-ip': '192.0.2.1' },
    });
    const { error, stdout } = await run(sim, [name]);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect(stdout).toMatch(new RegExp(`^node/${name} skipped: provided node IP 192\\.0\\.2\\.1`));
    const node = await readNode(name);
    expect(taintKeys(node)).toEqual([UNINIT.key]);
    expect(node.spec?.providerID).toBeUndefined();
    expect(await eventsOf(name)).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'ProvidedNodeIPMismatch' }),
    );
  });

  test('two servers named alike: unchanged, Warning event; the other nodes are still initialised', async () => {
    const twin = uniqueName('twin');
    const single = uniqueName('single');
    const sim = await simulator([
      { name: twin, host: 21 },
      { name: twin, host: 22 },
      { name: single, host: 23 },
    ]);
    await createNode(twin, { taints: [UNINIT] });
    await createNode(single, { taints: [UNINIT] });
    const before = await readNode(twin);

    const { error, stdout } = await run(sim, [twin, single]);

    expect(error).toBeInstanceOf(PartialFailureError);
    expect((error as PartialFailureError).failures.map((f) => f.object)).toEqual([`node/${twin}`]);
    expect(stdout).toContain(`node/${twin} skipped: no providerID and 2 servers named "${twin}"`);
    expect(stdout).toContain(`node/${single} initialized`);
    const after = await readNode(twin);
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(await eventsOf(twin)).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'AmbiguousServerName' }),
    );
    expect(taintKeys(await readNode(single))).toEqual([]);
  });

  test('no server of that name: unchanged, Warning event, non-zero', async () => {
    const name = uniqueName('nomatch');
    const sim = await simulator([{ name: `${name}-other`, host: 24 }]);
    await createNode(name, { taints: [UNINIT] });
    const { error, stdout } = await run(sim, [name]);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect(stdout).toContain(`node/${name} skipped: no providerID and no server named "${name}"`);
    expect(taintKeys(await readNode(name))).toEqual([UNINIT.key]);
    expect(await eventsOf(name)).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'ServerNotFound' }),
    );
  });

  test('a foreign providerID is never touched', async () => {
    const name = uniqueName('foreign');
    const sim = await simulator([{ name, host: 25 }]);
    await createNode(name, { providerID: 'hcloud://4711', taints: [UNINIT], ready: false });
    const before = await readNode(name);
    const { error, stdout } = await run(sim, [name]);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect(stdout).toContain(`node/${name} skipped: providerID hcloud://4711 belongs to provider "hcloud"`);
    const after = await readNode(name);
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(await eventsOf(name)).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'ForeignProviderID' }),
    );
    expect(serverRequests(sim)).toEqual({});
  });

  test('--dry-run says what would be done and writes nothing', async () => {
    const name = uniqueName('dry');
    const sim = await simulator([{ name, host: 26 }]);
    const uuid = await serverUuid(sim, name);
    await createNode(name, { taints: [UNINIT] });
    const before = await readNode(name);
    const { error, stdout } = await run(sim, [name], { dryRun: true });
    expect(error).toBeUndefined();
    expect(stdout).toBe(
      `node/${name} would be initialized: providerID cloudscale://${uuid}, zone rma1, 4 addresses\n`,
    );
    expect((await readNode(name)).metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(await eventsOf(name)).toEqual([]);
  });

  test('a named node that does not exist: a line, the others still handled, non-zero', async () => {
    const name = uniqueName('present');
    const absent = uniqueName('absent');
    const sim = await simulator([{ name, host: 28 }]);
    await createNode(name, { taints: [UNINIT] });
    const { error, stdout } = await run(sim, [absent, name]);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect((error as PartialFailureError).failures.map((f) => f.object)).toEqual([`node/${absent}`]);
    expect(stdout).toContain(`node/${absent} not found in the cluster\n`);
    expect(stdout).toContain(`node/${name} initialized`);
  });

  test('node names and --selector together are a usage error, before anything is read', async () => {
    const sim = await simulator([]);
    const { error } = await run(sim, ['x'], { selector: 'a=b' });
    expect(error).toBeInstanceOf(UsageError);
    expect(sim.admin.requests()).toEqual([]);
  });

  test('-o json gives one versioned document with the actions', async () => {
    const name = uniqueName('json');
    const sim = await simulator([{ name, host: 27 }]);
    await createNode(name, { taints: [UNINIT] });
    const { error, stdout } = await run(sim, [name], {}, 'json');
    expect(error).toBeUndefined();
    const doc = JSON.parse(stdout) as {
      version: number;
      kind: string;
      nodes: { node: string; outcome: string; actions: { kind: string; verb: string; impact: string }[] }[];
    };
    expect(doc).toMatchObject({ version: 1, kind: 'InitNodesResult', dryRun: false, failures: 0 });
    expect(doc.nodes).toEqual([
      expect.objectContaining({
        node: name,
        outcome: 'initialized',
        actions: [expect.objectContaining({ kind: 'initialize', verb: 'update', impact: 'none' })],
      }),
    ]);
  });
});

// ---- drift repair -----------------------------------------------------------------------------

describe('refresh', () => {
  test('wrong labels and addresses are repaired; a second pass writes nothing', async () => {
    const name = uniqueName('drift');
    const sim = await simulator([{ name, host: 31 }]);
    const uuid = await serverUuid(sim, name);
    await createNode(name, {
      providerID: `cloudscale://${uuid}`,
      labels: {
        'node.kubernetes.io/instance-type': 'flex-4-2',
        'beta.kubernetes.io/instance-type': 'flex-4-2',
        'topology.kubernetes.io/zone': 'lpg1',
        'failure-domain.beta.kubernetes.io/zone': 'lpg1',
        'topology.kubernetes.io/region': 'rma',
        'failure-domain.beta.kubernetes.io/region': 'rma',
        'kubernetes.io/hostname': name,
      },
      addresses: [{ type: 'InternalIP', address: '10.99.0.1' }],
    });

    const first = await run(sim, [name]);
    expect(first.error).toBeUndefined();
    expect(first.stdout).toBe(
      `node/${name} refreshed: topology.kubernetes.io/zone lpg1 → rma1, ` +
        'failure-domain.beta.kubernetes.io/zone lpg1 → rma1, ' +
        `addresses Hostname ${name}, ExternalIP 203.0.113.31, ExternalIP 2001:db8::31, InternalIP 10.20.0.31\n`,
    );
    const repaired = await readNode(name);
    expect(repaired.metadata?.labels).toMatchObject({
      'topology.kubernetes.io/zone': 'rma1',
      'failure-domain.beta.kubernetes.io/zone': 'rma1',
      'topology.kubernetes.io/region': 'rma',
      'kubernetes.io/hostname': name,
    });
    expect(repaired.status?.addresses?.map((a) => a.address)).toEqual([
      name,
      '203.0.113.31',
      '2001:db8::31',
      '10.20.0.31',
    ]);

    const second = await run(sim, [name]);
    expect(second.error).toBeUndefined();
    expect(second.stdout).toBe(`node/${name} in sync\n`);
    expect((await readNode(name)).metadata?.resourceVersion).toBe(repaired.metadata?.resourceVersion);
  });

  test('a full pass costs one server list, whatever the number of nodes', async () => {
    const label = uniqueName('pass');
    const names = [uniqueName('a'), uniqueName('b'), uniqueName('c')];
    const sim = await simulator(names.map((name, i) => ({ name, host: 40 + i })));
    for (const name of names) await createNode(name, { taints: [UNINIT], labels: { 'test.example/pass': label } });
    const { error, stdout } = await run(sim, [], { selector: `test.example/pass=${label}` });
    expect(error).toBeUndefined();
    expect(stdout.trim().split('\n')).toHaveLength(3);
    expect(serverRequests(sim)).toEqual({ 'GET /v1/servers': 1 });
  });

  test('a single named node with a providerID costs one GET of its server', async () => {
    const name = uniqueName('one');
    const sim = await simulator([{ name, host: 45 }]);
    const uuid = await serverUuid(sim, name);
    sim.admin.resetRequests();
    await createNode(name, { providerID: `cloudscale://${uuid}`, taints: [UNINIT] });
    const { error } = await run(sim, [name]);
    expect(error).toBeUndefined();
    expect(serverRequests(sim)).toEqual({ 'GET /v1/servers/{uuid}': 1 });
  });

  test('several named nodes cost one server list, not one GET each', async () => {
    const names = [uniqueName('m'), uniqueName('m'), uniqueName('m')];
    const sim = await simulator(names.map((name, i) => ({ name, host: 46 + i })));
    for (const name of names) {
      await createNode(name, { providerID: `cloudscale://${await serverUuid(sim, name)}`, taints: [UNINIT] });
    }
    sim.admin.resetRequests();
    const { error } = await run(sim, names);
    expect(error).toBeUndefined();
    expect(serverRequests(sim)).toEqual({ 'GET /v1/servers': 1 });
  });
});

// ---- lifecycle --------------------------------------------------------------------------------

describe('lifecycle', () => {
  test('stop → shutdown taint on the NotReady node; start → taint removed; delete → Node deleted', async () => {
    const down = uniqueName('down');
    const healthy = uniqueName('healthy');
    const sim = await simulator([
      { name: down, host: 51 },
      { name: healthy, host: 52 },
    ]);
    const downUuid = await serverUuid(sim, down);
    const healthyUuid = await serverUuid(sim, healthy);
    await createNode(down, { providerID: `cloudscale://${downUuid}`, ready: false });
    await createNode(healthy, { providerID: `cloudscale://${healthyUuid}`, ready: true });
    const names = [down, healthy];
    expect((await run(sim, names)).error).toBeUndefined();

    sim.admin.stopServer(downUuid);
    sim.admin.stopServer(healthyUuid);
    const stopped = await run(sim, names);
    expect(stopped.error).toBeUndefined();
    expect(stopped.stdout).toContain(`node/${down} shutdown taint added`);
    expect(taintKeys(await readNode(down))).toEqual([SHUTDOWN_KEY]);
    expect((await readNode(down)).spec?.taints?.find((t) => t.key === SHUTDOWN_KEY)?.effect).toBe('NoSchedule');
    expect(taintKeys(await readNode(healthy))).toEqual([]); // Ready: never tainted

    sim.admin.startServer(downUuid);
    const started = await run(sim, names);
    expect(started.error).toBeUndefined();
    expect(started.stdout).toContain(`node/${down} shutdown taint removed`);
    expect(taintKeys(await readNode(down))).toEqual([]);

    sim.admin.deleteServer(downUuid);
    const deleted = await run(sim, names);
    expect(deleted.error).toBeUndefined();
    expect(deleted.stdout).toContain(`node/${down} deleted: server ${downUuid}`);
    expect(await nodeExists(down)).toBe(false);
    expect(await nodeExists(healthy)).toBe(true);
    expect(await eventsOf(down)).toContainEqual(
      expect.objectContaining({ type: 'Normal', reason: 'DeletingNode' }),
    );
  });

  test('a Ready node whose server is gone is not deleted', async () => {
    const name = uniqueName('readygone');
    const sim = await simulator([{ name, host: 53 }, { name: `${name}-x`, host: 54 }]);
    const uuid = await serverUuid(sim, name);
    await createNode(name, { providerID: `cloudscale://${uuid}`, ready: true });
    sim.admin.deleteServer(uuid);
    const { error, stdout } = await run(sim, [name]);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect((error as Error).message).toBe('init-nodes: 1 of 1 node left unchanged or failed');
    expect(stdout).toContain('the node is Ready: it is not deleted');
    expect(await nodeExists(name)).toBe(true);
  });

  test('a name-only match is never deleted or tainted', async () => {
    const name = uniqueName('nameonly');
    const sim = await simulator([{ name: `${name}-x`, host: 55 }]);
    await createNode(name, { ready: false });
    const { error } = await run(sim, [name]);
    expect(error).toBeUndefined(); // not managed: no providerID, no taint
    expect(await nodeExists(name)).toBe(true);
  });

  test('an API error on the server lookup deletes nothing', async () => {
    const name = uniqueName('apierr');
    const sim = await simulator([{ name, host: 56 }]);
    const uuid = await serverUuid(sim, name);
    await createNode(name, { providerID: `cloudscale://${uuid}`, ready: false });
    sim.admin.setFaults({ errorRate: { pathPattern: '/v1/servers/*', methods: ['GET'], status: 500 } });
    const { error, stdout } = await run(sim, [name]);
    expect(error).toBeInstanceOf(PartialFailureError);
    expect(stdout).toContain(`node/${name} skipped: cannot read server ${uuid}`);
    expect(await nodeExists(name)).toBe(true);
  });
});

// ---- deletion needs a 404 ---------------------------------------------------------------------

describe('a Node is deleted only after GET /v1/servers/{uuid} answers 404', () => {
  /** Two NotReady nodes with live servers, selected by a per-test label: a list pass. */
  async function twoNotReadyNodes(prefix: string, host: number) {
    const label = uniqueName(prefix);
    const names = [uniqueName(prefix), uniqueName(prefix)];
    const sim = await simulator(names.map((name, i) => ({ name, host: host + i })));
    const uuids: string[] = [];
    for (const name of names) {
      const uuid = await serverUuid(sim, name);
      uuids.push(uuid);
      await createNode(name, { providerID: `cloudscale://${uuid}`, ready: false, labels: { 'test.example/pass': label } });
    }
    return { sim, names, uuids, selector: `test.example/pass=${label}` };
  }

  test('the server list leaves out a live server once: plan and init-nodes keep the NotReady Node', async () => {
    const { sim, names, uuids, selector } = await twoNotReadyNodes('omitted', 91);
    const [omitted] = names as [string, string];
    expect((await run(sim, [], { selector })).error).toBeUndefined(); // labels and addresses in sync
    const omitOnce = () =>
      sim.admin.setFaults({ shortList: { pathPattern: '/v1/servers', methods: ['GET'], count: 1, dropUuid: uuids[0]! } });

    omitOnce();
    sim.admin.resetRequests();
    const client = createCloudscaleClient({ baseUrl: sim.url, token: 'test-token', retry: { limit: 0 } });
    const planned = await planNodePass([], { selector }, { kube, cloudscale: client });
    expect(planned.plan.actions).toEqual([]);
    expect(planned.warnings).toEqual([
      `the server list left out server ${uuids[0]} (node/${omitted}), but GET /v1/servers/${uuids[0]} finds it: the Node is kept`,
    ]);
    // plan reads: the list, then the one GET that decides.
    expect(sim.admin.requests().map((r) => `${r.method} ${r.route}`)).toEqual([
      'GET /v1/servers',
      'GET /v1/servers/{uuid}',
    ]);

    omitOnce();
    const { error, stdout, stderr } = await run(sim, [], { selector });
    expect(error).toBeUndefined();
    expect(stdout).toBe(names.map((name) => `node/${name} in sync\n`).join(''));
    expect(stderr).toBe(
      `warning: the server list left out server ${uuids[0]} (node/${omitted}), but GET /v1/servers/${uuids[0]} finds it: the Node is kept\n`,
    );
    for (const name of names) expect(await nodeExists(name)).toBe(true);
    expect(await eventsOf(omitted)).toEqual([]);
  });

  test('the server is really gone: the GET answers 404 and the Node is deleted', async () => {
    const { sim, names, uuids, selector } = await twoNotReadyNodes('reallygone', 93);
    sim.admin.deleteServer(uuids[0]!);
    sim.admin.resetRequests();
    const { error, stdout } = await run(sim, [], { selector });
    expect(error).toBeUndefined();
    expect(stdout).toContain(`node/${names[0]} deleted: server ${uuids[0]} answered 404 (gone) and the node is NotReady`);
    expect(await nodeExists(names[0]!)).toBe(false);
    expect(await nodeExists(names[1]!)).toBe(true);
    expect(serverRequests(sim)).toEqual({ 'GET /v1/servers': 1, 'GET /v1/servers/{uuid}': 1 });
  });

  test('the list leaves the server out and its GET answers 503: no decision, the node is reported, nothing deleted', async () => {
    const { sim, names, uuids, selector } = await twoNotReadyNodes('undecided', 95);
    sim.admin.setFaults({
      shortList: { pathPattern: '/v1/servers', methods: ['GET'], count: 1, dropUuid: uuids[0]! },
      errorRate: { pathPattern: '/v1/servers/*', methods: ['GET'], status: 503, count: 1 },
    });
    const { error, stdout } = await run(sim, [], { selector });
    expect(error).toBeInstanceOf(PartialFailureError);
    expect((error as Error).message).toBe('init-nodes: 1 of 2 nodes left unchanged or failed');
    expect(stdout).toContain(`node/${names[0]} skipped: cannot read server ${uuids[0]}: cloudscale API GET /v1/servers/${uuids[0]} answered 503`);
    for (const name of names) expect(await nodeExists(name)).toBe(true);
  });

  test('--max-node-deletions 0 with a dead Node: kept, one warning, exit 0', async () => {
    const { sim, names, uuids, selector } = await twoNotReadyNodes('off', 97);
    sim.admin.deleteServer(uuids[0]!);
    sim.admin.resetRequests();
    const { error, stdout, stderr } = await run(sim, [], { selector, maxNodeDeletions: 0 });
    expect(error).toBeUndefined();
    expect(stdout).toContain(`node/${names[0]} kept: server ${uuids[0]} is not in the server list and the node is NotReady`);
    expect(stderr).toBe(
      `warning: node deletion is off (--max-node-deletions 0): 1 NotReady node whose server seems gone is kept: node/${names[0]}\n`,
    );
    expect(await nodeExists(names[0]!)).toBe(true);
    // Deletion is off, so nothing needs confirming.
    expect(serverRequests(sim)).toEqual({ 'GET /v1/servers': 1 });
  });
});

// ---- guard rails ------------------------------------------------------------------------------

describe('guard rails', () => {
  test('an empty project while nodes carry cloudscale providerIDs: nothing deleted, non-zero', async () => {
    const label = uniqueName('wrongproj');
    const names = [uniqueName('w'), uniqueName('w')];
    const sim = await simulator([]);
    for (const [i, name] of names.entries()) {
      await createNode(name, {
        providerID: `cloudscale://00000000-0000-4000-8000-00000000000${i}`,
        ready: false,
        labels: { 'test.example/pass': label },
      });
    }
    const { error, stdout } = await run(sim, [], {
      selector: `test.example/pass=${label}`,
      maxNodeDeletions: 10,
    });
    expect(error).toBeInstanceOf(PartialFailureError);
    expect((error as Error).message).toMatch(/lists no servers at all/);
    expect(stdout).toContain('node deletions refused: the cloudscale project lists no servers at all');
    for (const name of names) expect(await nodeExists(name)).toBe(true);
  });

  test('more deletions than the bound: none is deleted; within the bound: all are', async () => {
    const label = uniqueName('bound');
    const gone = [uniqueName('g'), uniqueName('g'), uniqueName('g')];
    const kept = uniqueName('k');
    const sim = await simulator([...gone, kept].map((name, i) => ({ name, host: 60 + i })));
    for (const name of [...gone, kept]) {
      const uuid = await serverUuid(sim, name);
      await createNode(name, {
        providerID: `cloudscale://${uuid}`,
        ready: !gone.includes(name),
        labels: { 'test.example/pass': label },
      });
    }
    for (const name of gone) sim.admin.deleteServer(await serverUuid(sim, name));
    const selector = `test.example/pass=${label}`;

    const refused = await run(sim, [], { selector, maxNodeDeletions: 2 });
    expect(refused.error).toBeInstanceOf(PartialFailureError);
    expect(refused.stdout).toContain('3 nodes would be deleted, more than --max-node-deletions 2');
    for (const name of gone) {
      expect(refused.stdout).toContain(`node/${name} deletion refused`);
      expect(await nodeExists(name)).toBe(true);
    }
    expect(await eventsOf(gone[0]!)).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'DeletingNodeRefused' }),
    );

    const allowed = await run(sim, [], { selector, maxNodeDeletions: 3 });
    expect(allowed.error).toBeUndefined();
    for (const name of gone) expect(await nodeExists(name)).toBe(false);
    expect(await nodeExists(kept)).toBe(true);
  });

  test('the default bound (one node here) refuses two deletions', async () => {
    const label = uniqueName('defbound');
    const names = [uniqueName('d'), uniqueName('d'), uniqueName('d')];
    const sim = await simulator(names.map((name, i) => ({ name, host: 70 + i })));
    for (const name of names) {
      await createNode(name, {
        providerID: `cloudscale://${await serverUuid(sim, name)}`,
        ready: false,
        labels: { 'test.example/pass': label },
      });
    }
    for (const name of names.slice(0, 2)) sim.admin.deleteServer(await serverUuid(sim, name));
    const { error } = await run(sim, [], { selector: `test.example/pass=${label}` });
    expect(error).toBeInstanceOf(PartialFailureError);
    for (const name of names) expect(await nodeExists(name)).toBe(true);
  });
});

// ---- conflicts --------------------------------------------------------------------------------

describe('conflicts', () => {
  test('a kubelet write between read and patch causes a 409; the node is re-read and the retry keeps both', async () => {
    const name = uniqueName('race');
    const sim = await simulator([{ name, host: 81 }]);
    await createNode(name, { taints: [UNINIT] });
    const attempts: number[] = [];
    const { result, error } = await run(sim, [name], {
      beforeNodeWrite: async (_node, attempt) => {
        attempts.push(attempt);
        if (attempt !== 1) return;
        // What a kubelet does: its own label and taint, without looking at resourceVersion.
        await kube.core.patchNode(
          {
            name,
            body: {
              metadata: { labels: { 'kubelet.example/written': 'yes' } },
              spec: { taints: [UNINIT, DEDICATED] },
            },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      },
    });
    expect(error).toBeUndefined();
    expect(attempts).toEqual([1, 2]);
    expect(result?.nodes[0]?.outcome).toBe('initialized');
    const node = await readNode(name);
    expect(node.metadata?.labels?.['kubelet.example/written']).toBe('yes');
    expect(node.metadata?.labels?.['topology.kubernetes.io/zone']).toBe('rma1');
    expect(taintKeys(node)).toEqual([DEDICATED.key]);
    expect(node.spec?.providerID).toMatch(/^cloudscale:\/\//);
  });

  test('conflicts on every attempt: bounded, the node keeps its taint and the pass fails', async () => {
    const name = uniqueName('storm');
    const sim = await simulator([{ name, host: 82 }]);
    await createNode(name, { taints: [UNINIT] });
    let writes = 0;
    const { error, stdout } = await run(sim, [name], {
      beforeNodeWrite: async () => {
        writes += 1;
        await kube.core.patchNode(
          { name, body: { metadata: { labels: { 'kubelet.example/heartbeat': String(writes) } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      },
    });
    expect(error).toBeInstanceOf(PartialFailureError);
    expect(writes).toBe(5);
    expect(stdout).toMatch(new RegExp(`^node/${name} failed: initialize failed: .*`));
    expect(taintKeys(await readNode(name))).toEqual([UNINIT.key]);
    expect(await eventsOf(name)).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'NodeSyncFailed' }),
    );
  });
});
