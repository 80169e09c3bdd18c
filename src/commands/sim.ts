// `cloudscale-ccm sim`: runs the cloudscale API simulator until the signal aborts. The first
// stdout line is `CLOUDSCALE_API_URL=…` so that scripts can read it (`head -n1`).

import { UsageError } from '../core/errors.js';
import { loadSeedFile, startSimulator, type SimSeed } from '../sim/index.js';
import { DEFAULT_WORLD, isTimeScale, isWorldName, TIME_SCALE_RANGE, WORLD_NAMES, type WorldName } from '../sim/world-names.js';

export interface SimCommandOptions {
  seed?: string;
  port?: number;
  lbProvisionSeconds?: number;
  token?: string;
  /** Added to every API request, as the admin API's `latencyMs` fault. */
  latencyMs?: number;
  poolDeleteKeepsListeners?: boolean;
  /** `strict` or `forgiving` (docs/sim.md, "Worlds"); default DEFAULT_WORLD. */
  world?: string;
  /** Multiplies every modelled duration; default 1. */
  timeScale?: number;
}

export interface SimCommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  signal: AbortSignal;
}

export async function simCommand(options: SimCommandOptions, io: SimCommandIo): Promise<void> {
  if (options.port !== undefined && !(Number.isInteger(options.port) && options.port >= 0 && options.port <= 65535)) {
    throw new UsageError(`--port ${options.port}: expected a port number from 0 to 65535`, {
      hint: 'Use 0 or leave --port out to pick a free port.',
    });
  }
  const provisionSeconds = options.lbProvisionSeconds;
  if (provisionSeconds !== undefined && !(Number.isFinite(provisionSeconds) && provisionSeconds >= 0)) {
    throw new UsageError(`--lb-provision-seconds ${provisionSeconds}: expected a number of seconds ≥ 0`, {
      hint: 'Real load balancers take up to about 120 s; 2 is the default.',
    });
  }
  const latencyMs = options.latencyMs;
  if (latencyMs !== undefined && !(Number.isFinite(latencyMs) && latencyMs >= 0)) {
    throw new UsageError(`--latency-ms ${latencyMs}: expected a number of milliseconds ≥ 0`, {
      hint: 'Single calls of the real API take from about 50 ms to several seconds.',
    });
  }
  const world = options.world ?? DEFAULT_WORLD;
  if (!isWorldName(world)) {
    throw new UsageError(`--world ${world}: expected one of ${WORLD_NAMES.join(', ')}`, {
      hint: 'strict plays the real API (timings, health checks, error status); forgiving serves every change at once.',
    });
  }
  const timeScale = options.timeScale;
  if (timeScale !== undefined && !isTimeScale(timeScale)) {
    throw new UsageError(`--time-scale ${timeScale}: expected a number from ${TIME_SCALE_RANGE.min} to ${TIME_SCALE_RANGE.max}`, {
      hint: '1 is real time; 0.05 runs every modelled duration 20 times faster.',
    });
  }
  const seed: SimSeed = options.seed === undefined ? {} : await loadSeedFile(options.seed);
  if (io.signal.aborted) return;

  const sim = await startSimulator({
    seed,
    port: options.port,
    lbProvisionMs: provisionSeconds === undefined ? undefined : Math.round(provisionSeconds * 1000),
    token: options.token,
    world,
    timeScale,
    ...(options.poolDeleteKeepsListeners === true ? { behaviour: { poolDeleteKeepsListeners: true } } : {}),
  });
  try {
    if (latencyMs !== undefined && latencyMs > 0) sim.admin.setFaults({ latencyMs });
    io.stdout.write(`CLOUDSCALE_API_URL=${sim.url}\n`);
    io.stdout.write(describeSeed(seed, options.seed));
    io.stdout.write(describeWorld(world, timeScale ?? 1));
    if (latencyMs !== undefined && latencyMs > 0) io.stdout.write(`Every API request is delayed by ${latencyMs} ms.\n`);
    if (options.poolDeleteKeepsListeners === true) io.stdout.write('A pool delete leaves its listeners behind (pool: null).\n');
    io.stdout.write(`Admin API: ${sim.url}/_sim/ (faults, request log, server stop/start/delete; see docs/sim.md)\n`);
    io.stdout.write(
      options.token === undefined
        ? 'Any token is accepted.\n'
        : 'Requests need the token given with --token (Authorization: Bearer …).\n',
    );
    io.stdout.write('Press Ctrl-C to stop.\n');
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    await sim.stop();
  }
}

function describeWorld(world: WorldName, timeScale: number): string {
  const what =
    world === 'strict'
      ? 'the real API: changes reach the load balancers after its delays, health monitors check members, a pool with every member down puts its load balancer in error, deletes settle before their slot is free'
      : 'every change serves at once, no health checks, no error status, deletes free their slot at once';
  const scale = timeScale === 1 ? 'real time' : `time scale ${timeScale}: every modelled duration × ${timeScale}`;
  return `World ${world} (${scale}): ${what}.\n`;
}

function describeSeed(seed: SimSeed, path: string | undefined): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
  const servers = seed.servers ?? [];
  const networks = seed.networks ?? [];
  const subnets = networks.reduce((sum, network) => sum + (network.subnets?.length ?? 0), 0);
  const floatingIps = seed.floating_ips ?? [];
  const from = path === undefined ? 'no seed: an empty cloud' : `seed ${path}`;
  const names = servers.length === 0 ? '' : ` (${servers.map((s) => s.name).join(', ')})`;
  return (
    `Loaded ${from}: ${count(servers.length, 'server')}${names}, ${count(networks.length, 'network')} ` +
    `with ${count(subnets, 'subnet')}, ${count(floatingIps.length, 'floating IP')}.\n`
  );
}
