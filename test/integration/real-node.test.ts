// @kube-versions: all — a kubelet of each release registers its Node and updates it as that release does
// @test-tools: node
// The tool next to a real kubelet (test/support/real-node.ts; docs/real-node.md): a kubelet of the
// control plane's release, started with --cloud-provider=external on containerd + runc, registers
// the Node of a simulated server itself. The tool must initialise that Node, never fight the
// kubelet's own writes over minutes of status updates, honour --node-ip (the kubelet's
// alpha.kubernetes.io/provided-node-ip annotation) as the generic controller does, react to a Node
// the kubelet registers while a run watches, and run the node lifecycle on it: kubelet and server
// stopped → NotReady → shutdown taint; both back → taint gone; server deleted → Node deleted, and
// not on a server list that is wrong once. kube-controller-manager runs the node lifecycle
// controller (NotReady after 20 s without a kubelet heartbeat: helpers/test-cluster).
//
// The kubelet's status updates are watched for 3 minutes against the default Kubernetes and for
// 30 s (three updates) against each further version, to keep the version runs short.
import type { V1Node } from '@kubernetes/client-node';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROVIDED_NODE_IP_ANNOTATION } from '../../src/core/nodes/well-known.js';
import { FIELD_MANAGER } from '../../src/core/kube/nodes.js';
import { startSimulator, type SimSeed, type Simulator } from '../../src/sim/index.js';
import { killStarted, startBinary, type RunningBinary } from '../cli/cli-support.js';
import { runBinary, TEST_TOKEN } from '../support/ccm.js';
import { ignoreNotFound, testConnection, uniqueName, UNINITIALIZED_TAINT_KEY, waitUntil } from '../support/kube.js';
import { nodeLogDir, nodeNetworkReady, realNodeSupport, startControllers, startKubelet, startNode, stopControllers, stopKubelet, stopNode } from '../support/real-node.js';
import { testSimWorld } from '../support/sim-world.js';

const unsupported = realNodeSupport();
if (unsupported !== undefined) console.warn(`real-node.test.ts is skipped: ${unsupported}`);

const SHUTDOWN_TAINT_KEY = 'node.cloudprovider.kubernetes.io/shutdown';
const OBSERVE_SECONDS = (process.env.TEST_CLUSTER_KUBE ?? '') === '' ? 180 : 30;
const name = uniqueName('rn');
// The kubelet accepts as --node-ip only an address of one of this host's interfaces, not a
// loopback one: the server's private address is the host's own (its first non-internal IPv4),
// and another of the host's addresses stands for an IP that is not the server's.
const hostAddresses = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && !a.internal && !a.address.startsWith('fe80:'));
const hostIPv4 = hostAddresses.find((a) => a!.family === 'IPv4');
const PRIVATE_IP = hostIPv4?.address ?? '10.83.0.7';
const PRIVATE_CIDR = hostIPv4?.cidr === undefined || hostIPv4.cidr === null ? '10.83.0.0/24' : subnetOf(hostIPv4.cidr);
const OTHER_HOST_IP = hostAddresses.find((a) => a!.address !== PRIVATE_IP)?.address;
const seed: SimSeed = {
  networks: [{ name: 'private', zone: 'rma1', subnets: [{ cidr: PRIVATE_CIDR }] }],
  servers: [
    {
      name,
      flavor: 'flex-4-2',
      zone: 'rma1',
      // 127.0.0.1: where the API server reaches this kubelet (kubectl logs) once the tool set it.
      interfaces: [
        { type: 'public', addresses: ['127.0.0.1'] },
        { type: 'private', network: 'private', addresses: [PRIVATE_IP] },
      ],
    },
    // A server of the project without a Node: the project's server list is never empty, which the
    // node lifecycle's guard rail would read as a wrong token (no Node is deleted then).
    { name: `${name}-bystander`, flavor: 'flex-4-2', zone: 'rma1', interfaces: [{ type: 'public', addresses: ['203.0.113.9'] }] },
  ],
};

let sim: Simulator;
let serverUuid: string;
let nodeStarted = false;
let controllersStarted = false;
const started: RunningBinary[] = [];
const core = () => testConnection().core;
const readNode = (): Promise<V1Node> => core().readNode({ name });
const taintKeys = (node: V1Node) => (node.spec?.taints ?? []).map((t) => t.key);
const isReady = (node: V1Node) => node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const cloudWrites = () => sim.admin.requests().filter((r) => r.method !== 'GET');
const cli = (args: readonly string[]) => runBinary(args, { apiUrl: sim.url, timeoutMs: 90_000 });
/** The time of the tool's last write of the Node, as its managed fields record it. */
const toolWriteTimes = (node: V1Node) =>
  (node.metadata?.managedFields ?? []).filter((m) => m.manager === FIELD_MANAGER).map((m) => `${m.operation} ${m.subresource ?? ''} ${String(m.time)}`);

/** The network of an interface's `a.b.c.d/len` (IPv4). */
function subnetOf(cidr: string): string {
  const [address, length] = cidr.split('/') as [string, string];
  const bits = address.split('.').reduce((n, octet) => (n << 8) + Number(octet), 0) >>> 0;
  const mask = Number(length) === 0 ? 0 : (~0 << (32 - Number(length))) >>> 0;
  const network = (bits & mask) >>> 0;
  return `${[24, 16, 8, 0].map((shift) => (network >>> shift) & 255).join('.')}/${length}`;
}

async function deleteNode(): Promise<void> {
  await ignoreNotFound(core().deleteNode({ name }));
  await waitUntil(`node ${name} deleted`, async () => (await ignoreNotFound(readNode())) === undefined);
}

/** The node stopped, its Node deleted, and a kubelet started afresh (with `options`): it registers the Node again. */
async function registerAgain(options: { nodeIp?: string } = {}): Promise<void> {
  await stopNode();
  nodeStarted = false;
  await deleteNode();
  await startNode(name, options);
  nodeStarted = true;
}

describe.skipIf(unsupported !== undefined)('a real kubelet registers the Node of a simulated server', () => {
  beforeAll(async () => {
    sim = await startSimulator({ seed, token: TEST_TOKEN, lbProvisionMs: 0, serverActionMs: 0, ...testSimWorld() });
    const servers = (await (await fetch(`${sim.url}/v1/servers`, { headers: { Authorization: `Bearer ${TEST_TOKEN}` } })).json()) as { uuid: string; name: string }[];
    serverUuid = servers.find((server) => server.name === name)!.uuid;
    await startControllers(['node-lifecycle-controller']);
    controllersStarted = true;
    await startNode(name);
    nodeStarted = true;
  });

  afterAll(async () => {
    await killStarted(started);
    if (nodeStarted) await stopNode();
    if (controllersStarted) await stopControllers();
    await ignoreNotFound(core().deleteNode({ name }));
    await sim?.stop();
  });

  test('its Node is tainted uninitialized and has no node IP and no providerID until the tool ran', async () => {
    const node = await readNode();
    expect(taintKeys(node)).toContain(UNINITIALIZED_TAINT_KEY);
    expect(node.spec?.providerID).toBeUndefined();
    // Since Kubernetes 1.29 a kubelet with an external cloud provider and no --node-ip sets no IP.
    expect((node.status?.addresses ?? []).filter((a) => a.type.endsWith('IP'))).toEqual([]);
    expect(node.status?.nodeInfo?.kubeletVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(node.metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION]).toBeUndefined();
  });

  test('init-nodes initialises it: providerID, topology labels, addresses, the taint removed', async () => {
    const result = await cli(['init-nodes', name]);
    expect(result.code, result.stderr).toBe(0);
    const node = await readNode();
    expect(node.spec?.providerID).toBe(`cloudscale://${serverUuid}`);
    expect(node.metadata?.labels).toMatchObject({ 'topology.kubernetes.io/zone': 'rma1', 'node.kubernetes.io/instance-type': 'flex-4-2' });
    expect(node.status?.addresses).toEqual(
      expect.arrayContaining([
        { type: 'Hostname', address: name },
        { type: 'ExternalIP', address: '127.0.0.1' },
        { type: 'InternalIP', address: PRIVATE_IP },
      ]),
    );
    expect(taintKeys(node)).not.toContain(UNINITIALIZED_TAINT_KEY);
  });

  test(`over ${OBSERVE_SECONDS} s of the kubelet's status updates, a watching run writes nothing and nothing it set is lost`, { timeout: (OBSERVE_SECONDS + 90) * 1000 }, async () => {
    const before = await readNode();
    const writesBefore = cloudWrites().length;
    const versions = new Set<string>();
    const run = startBinary(['run', '--watch-for', `${OBSERVE_SECONDS}s`, '--poll-seconds', '0.5', '--settle-seconds', '0'], { apiUrl: sim.url });
    started.push(run);
    let lost: string | undefined;
    const watcher = (async () => {
      while (run.child.exitCode === null) {
        const node = await readNode();
        versions.add(node.metadata!.resourceVersion!);
        if (node.spec?.providerID !== before.spec?.providerID || JSON.stringify(node.status?.addresses) !== JSON.stringify(before.status?.addresses)) {
          lost ??= `at resourceVersion ${node.metadata!.resourceVersion}: providerID ${node.spec?.providerID}, addresses ${JSON.stringify(node.status?.addresses)}`;
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    })();
    const exit = await run.exited;
    await watcher;
    expect(exit.code, run.stderr()).toBe(0);
    expect(lost).toBeUndefined();
    // The kubelet did write the Node meanwhile (every 10 s): otherwise there was nothing to live with.
    expect(versions.size).toBeGreaterThanOrEqual(Math.floor(OBSERVE_SECONDS / 10) - 1);
    const after = await readNode();
    expect(after.metadata?.labels).toMatchObject({ 'topology.kubernetes.io/zone': 'rma1' });
    expect(toolWriteTimes(after)).toEqual(toolWriteTimes(before));
    expect(cloudWrites().length).toBe(writesBefore);
    expect(run.stdout()).toMatch(/^run: nodes 0 initialized, 0 refreshed, 0 deleted/m);
    // Its reaction passes to the kubelet's updates, if any, changed nothing.
    const reactions = `${run.stdout()}\n${run.stderr()}`.split('\n').filter((l) => l.startsWith('watch: node/'));
    for (const line of reactions) expect(line).toMatch(/nothing changed, 0 failures/);
    console.log(`${versions.size} versions of node ${name} written by the kubelet in ${OBSERVE_SECONDS} s; ${reactions.length} reaction passes, all without a write`);
    const plan = await cli(['plan', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
  });

  test('a Node the kubelet registers while a run watches is initialised within seconds', { timeout: 120_000 }, async () => {
    await stopKubelet();
    await deleteNode();
    const run = startBinary(['run', '--watch-for', '60s', '--poll-seconds', '0.5', '--settle-seconds', '0'], { apiUrl: sim.url });
    started.push(run);
    await waitUntil('the run watching', () => /^watch: watching Nodes and Services/m.test(run.stdout() + run.stderr()) || run.child.exitCode !== null, 60_000);
    expect(run.child.exitCode).toBeNull();
    await startKubelet();
    let initialisedAfterMs: number | undefined;
    await waitUntil(
      `node ${name} initialised by the watching run`,
      async () => {
        const node = await ignoreNotFound(readNode());
        if (node === undefined || taintKeys(node).includes(UNINITIALIZED_TAINT_KEY) || node.spec?.providerID === undefined) return false;
        initialisedAfterMs = Date.now() - new Date(node.metadata!.creationTimestamp!).getTime();
        return true;
      },
      30_000,
    );
    console.log(`node ${name}: registered by the kubelet, initialised by the watching run ${initialisedAfterMs} ms later`);
    // Within seconds (the reaction takes about one; seconds of slack for a loaded machine).
    expect(initialisedAfterMs!).toBeLessThan(10_000);
    // The reaction pass reports once it has also written its record: its line, then the end.
    await waitUntil('the reaction pass reported', () => new RegExp(`^watch: node/${name}: 1 node initialized`, 'm').test(run.stdout() + run.stderr()), 30_000);
    run.child.kill('SIGTERM');
    await run.exited;
  });

  test('--node-ip: the kubelet announces the provided IP and the tool puts it first, as the generic controller does; an IP the server lacks is refused', { timeout: 150_000 }, async (context) => {
    if (hostIPv4 === undefined) context.skip('this host has no non-loopback IPv4 address, and the kubelet takes no other as --node-ip');
    await registerAgain({ nodeIp: PRIVATE_IP });
    await waitUntil('the provided-node-ip annotation', async () => (await readNode()).metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION] === PRIVATE_IP);
    const initialised = await cli(['init-nodes', name]);
    expect(initialised.code, initialised.stderr).toBe(0);
    const node = await readNode();
    // The provided IP leads; the others of its type are dropped, those of other types follow.
    expect(node.status?.addresses?.[0]).toEqual({ type: 'InternalIP', address: PRIVATE_IP });
    expect(node.status?.addresses).toEqual(expect.arrayContaining([{ type: 'Hostname', address: name }, { type: 'ExternalIP', address: '127.0.0.1' }]));
    // Three of the kubelet's status updates later: still the tool's addresses, nothing to do.
    const seen = node.metadata!.resourceVersion!;
    await waitUntil('three kubelet status updates', async () => Number((await readNode()).metadata!.resourceVersion) > Number(seen), 30_000);
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    expect((await readNode()).status?.addresses).toEqual(node.status?.addresses);
    const plan = await cli(['plan', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);

    // An IP that is not the server's: nothing is set, the Node stays uninitialised, and why is said.
    if (OTHER_HOST_IP === undefined) {
      console.warn('real-node.test.ts: this host has one non-loopback address only: the refused --node-ip is not tried');
    } else {
      await registerAgain({ nodeIp: OTHER_HOST_IP });
      await waitUntil('the provided-node-ip annotation', async () => (await readNode()).metadata?.annotations?.[PROVIDED_NODE_IP_ANNOTATION] === OTHER_HOST_IP);
      const refused = await cli(['init-nodes', name]);
      expect(refused.code).toBe(1);
      expect(refused.stdout + refused.stderr).toContain(`provided node IP ${OTHER_HOST_IP} (annotation alpha.kubernetes.io/provided-node-ip) is not an address of the server`);
      const untouched = await readNode();
      expect(untouched.spec?.providerID).toBeUndefined();
      expect(taintKeys(untouched)).toContain(UNINITIALIZED_TAINT_KEY);
    }

    // Back to a kubelet without --node-ip for the lifecycle.
    await registerAgain();
    const again = await cli(['init-nodes', name]);
    expect(again.code, again.stderr).toBe(0);
  });

  test('node lifecycle: kubelet and server stopped → shutdown taint; both back → taint gone; server deleted → Node deleted, not on a wrong list', { timeout: 240_000 }, async () => {
    // A pod network configuration makes the runtime's network ready: the Node becomes Ready.
    await nodeNetworkReady();
    await waitUntil(`node ${name} Ready`, async () => isReady(await readNode()), 60_000);

    await stopKubelet();
    sim.admin.stopServer(serverUuid);
    await waitUntil(`node ${name} NotReady (no kubelet heartbeat)`, async () => !isReady(await readNode()), 90_000);
    const tainted = await cli(['init-nodes', name]);
    expect(tainted.code, tainted.stderr).toBe(0);
    expect(taintKeys(await readNode())).toContain(SHUTDOWN_TAINT_KEY);

    sim.admin.startServer(serverUuid);
    await startKubelet();
    await waitUntil(`node ${name} Ready again`, async () => isReady(await readNode()), 60_000);
    const cleared = await cli(['init-nodes', name]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(taintKeys(await readNode())).not.toContain(SHUTDOWN_TAINT_KEY);

    // The kubelet gone for good, and its server missing from the server list once: its UUID still
    // answers, so the Node stays (a deletion needs a 404 by UUID).
    await stopKubelet();
    await waitUntil(`node ${name} NotReady`, async () => !isReady(await readNode()), 90_000);
    sim.admin.setFaults({ shortList: { pathPattern: '/v1/servers', methods: ['GET'], dropUuid: serverUuid, count: 1 } });
    const wrongList = await cli(['init-nodes', name]);
    sim.admin.clearFaults();
    expect(wrongList.code, wrongList.stderr).toBe(0);
    expect(sim.admin.requests().some((r) => r.method === 'GET' && r.path === `/v1/servers/${serverUuid}`)).toBe(true);
    expect(await ignoreNotFound(readNode())).toBeDefined();

    // The server deleted: its UUID answers 404, the NotReady Node goes.
    sim.admin.deleteServer(serverUuid);
    const deleted = await cli(['init-nodes']);
    expect(deleted.code, `${deleted.stdout}\n${deleted.stderr}\n(node logs in ${nodeLogDir()})`).toBe(0);
    expect(await ignoreNotFound(readNode())).toBeUndefined();
  });
});
