// What a fault-and-race scenario exercises, as named kinds: its case, each kind of fault, edit,
// kill and adversary, each writer command, `--wait`, two writers at once, each step a pool swap
// is killed at. The suite's fixed seeds must meet every kind (test/integration/fault-race.test.ts
// asserts it), so `npm test` keeps every kind of run while the long random soak
// (`npm run soak:race`) keeps the numbers.
import {
  CASES,
  FAILED_REQUEST_CASE,
  FAILED_REQUESTS,
  type FailedRequest,
  STEP_SIGNALS,
  STRATEGIES,
  SWAP_KILL_POINTS,
  type Adversary,
  type EditSpec,
  type FaultSpec,
  type Scenario,
  type WriterCommand,
  type WriterSpec,
} from './scenario.js';

/** Every FaultSpec kind; the type below fails to compile when one is missing. */
const FAULT_KINDS = [
  'lb-list-empty',
  'lb-list-short',
  'server-list-drop',
  'create-503-applied',
  'reset',
  'hang',
  'error',
  'latency',
  'lb-error',
  'storm-429',
] as const satisfies readonly FaultSpec['kind'][];
const EDIT_KINDS = ['not-ready', 'delete-server', 'restore', 'rename', 'add-service', 'swap', 'node-port', 'selector', 'pool-down'] as const satisfies readonly EditSpec['kind'][];
/** The edits of the strategy runs, told apart by what they leave for the tool to do. */
const STRATEGY_EDITS = ['node-port with new members up', 'node-port with new members never up', 'selector subset', 'selector nothing', 'selector down'] as const;
const ADVERSARIES = ['429 storm', 'pause', 'clock skew'] as const satisfies readonly Adversary[];
const COMMANDS = ['sync-lb', 'run', 'cleanup', 'init-nodes'] as const satisfies readonly WriterCommand[];

/** Compiles only while `Listed` names every member of `All`. */
type Complete<All, Listed extends All> = [Exclude<All, Listed>] extends [never] ? true : never;
const listsComplete: [
  Complete<FaultSpec['kind'], (typeof FAULT_KINDS)[number]>,
  Complete<EditSpec['kind'], (typeof EDIT_KINDS)[number]>,
  Complete<Adversary, (typeof ADVERSARIES)[number]>,
  Complete<WriterCommand, (typeof COMMANDS)[number]>,
] = [true, true, true, true];
void listsComplete;

/** Every kind a set of scenarios can exercise. */
export const ALL_KINDS: readonly string[] = [
  ...Object.keys(CASES).map((id) => `case ${id}`),
  ...FAULT_KINDS.map((kind) => `fault ${kind}`),
  ...EDIT_KINDS.map((kind) => `edit ${kind}`),
  ...STRATEGY_EDITS.map((kind) => `edit ${kind}`),
  ...ADVERSARIES.map((adversary) => `adversary ${adversary}`),
  ...COMMANDS.map((command) => `writer ${command}`),
  'writer --wait',
  'two writers at once',
  'kill after a request',
  'kill after some milliseconds',
  ...SWAP_KILL_POINTS.map((point) => `pool swap killed ${point}`),
  ...STEP_SIGNALS.flatMap((signal) => STRATEGIES.map((strategy) => `${signal} between two steps of ${strategy}`)),
  ...FAILED_REQUESTS.map((failure) => `one failed request: ${failure}`),
];

/** The kinds one scenario exercises (a subset of ALL_KINDS). */
export function kindsOf(scenario: Scenario): Set<string> {
  const kinds = new Set<string>([`case ${scenario.caseId}`, ...scenario.adversaries.map((a) => `adversary ${a}`)]);
  for (const step of scenario.steps) {
    if (step.kind === 'fault') kinds.add(`fault ${step.fault.kind}`);
    if (step.kind === 'fault' && scenario.caseId === FAILED_REQUEST_CASE) kinds.add(`one failed request: ${failureOf(step.fault)}`);
    if (step.kind === 'edit') for (const kind of editKinds(step.edit)) kinds.add(kind);
    if (step.kind !== 'writers') continue;
    if (step.writers.length > 1) kinds.add('two writers at once');
    for (const writer of step.writers) for (const kind of writerKinds(writer)) kinds.add(kind);
  }
  return kinds;
}

/** Which of FAILED_REQUESTS a failed-request run's fault plays. */
function failureOf(fault: FaultSpec): FailedRequest | 'other' {
  if (fault.kind === 'reset') return 'reset';
  if (fault.kind === 'hang') return 'timeout';
  if (fault.kind !== 'error') return 'other';
  if (fault.status === 503) return '503 Retry-After';
  return fault.status === 400 ? '400' : '500';
}

function editKinds(edit: EditSpec): string[] {
  if (edit.kind === 'node-port') return ['edit node-port', `edit node-port with new members ${edit.newUp ? 'up' : 'never up'}`];
  if (edit.kind === 'selector') return ['edit selector', `edit selector ${edit.match}`];
  return [`edit ${edit.kind}`];
}

function writerKinds(writer: WriterSpec): string[] {
  const kinds = [`writer ${writer.command}`];
  if (writer.wait) kinds.push('writer --wait');
  if (writer.kill?.after === 'ms') kinds.push('kill after some milliseconds');
  if (writer.kill?.after === 'request') kinds.push('kill after a request');
  if (writer.swapKill !== undefined) kinds.push(`pool swap killed ${writer.swapKill}`);
  if (writer.stepKill !== undefined && writer.kill?.after === 'step') kinds.push(`${writer.kill.signal} between two steps of ${writer.stepKill}`);
  return kinds;
}

/** The kinds of ALL_KINDS that none of `scenarios` exercises, in ALL_KINDS' order. */
export function missingKinds(scenarios: readonly Scenario[]): string[] {
  const met = new Set(scenarios.flatMap((scenario) => [...kindsOf(scenario)]));
  return ALL_KINDS.filter((kind) => !met.has(kind));
}
