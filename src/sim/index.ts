// The cloudscale API simulator: a stateful in-memory HTTP server of the API v1 subset this tool
// uses (docs/cloudscale-api.md), for tests, demos and benchmarks. docs/sim.md documents the
// seed format and the admin API.

export { startSimulator, type Simulator, type SimulatorOptions } from './server.js';
export { SimAdminError, type SimulatorAdmin, type ProbeRequest, type WorldInfo } from './admin.js';
export type { RequestLogEntry, RouteCount } from './request-log.js';
export type { DataPlaneChanges, DataPlaneTimings, PropagationTable } from './dataplane-timings.js';
export type { ConnectionInfo, ConnectResult, PortServing, ProbeResult } from './dataplane-views.js';
export { DEFAULT_WORLD, REAL_PROPAGATION, WORLD_NAMES, WORLDS, type World, type WorldName } from './world.js';
export {
  loadSeedFile,
  parseSeed,
  type SimSeed,
  type SeedNetwork,
  type SeedSubnet,
  type SeedServer,
  type SeedInterface,
  type SeedFloatingIp,
} from './seed.js';
export type { SimBehaviour } from './behaviour.js';
export type {
  FaultConfig,
  ErrorFault,
  RateLimitFault,
  ConnectionResetFault,
  HangFault,
  ShortListFault,
  RequestMatcher,
} from './faults.js';
