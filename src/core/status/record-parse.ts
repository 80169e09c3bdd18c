// Reading a status record back: the JSON a pass stored under its command's key, checked field by
// field before anything shows it. A key edited by hand, written by another tool or cut short
// must not end `status` with a TypeError: it is reported as unreadable, naming the ConfigMap,
// the key, what is wrong and how to get rid of it. Pure.
import type { PassCommand, PassRecord } from './record.js';

/** What a field must hold: `string?` is a string or null, `counts` numbers by name. */
type Shape =
  | 'string'
  | 'number'
  | 'string?'
  | 'counts'
  | { readonly nullable: Fields }
  | { readonly list: Fields }
  | { readonly fields: Fields };
type Fields = { readonly [field: string]: Shape };

const CAPPED = (item: Fields): Shape => ({ fields: { items: { list: item }, omitted: 'number' } });

/** The fields of a PassRecord (record.ts), as written since records exist. */
const RECORD: Fields = {
  version: 'string',
  holder: 'string?',
  startedAt: 'string',
  finishedAt: 'string',
  durationMs: 'number',
  result: 'string',
  error: 'string?',
  lastSuccessAt: 'string?',
  nodes: { nullable: { total: 'number', byOutcome: 'counts' } },
  services: { nullable: { total: 'number', byStatus: 'counts', waitingForIp: 'number' } },
  cleanup: { nullable: { deleted: 'number', candidates: 'number' } },
  failing: CAPPED({ object: 'string', reason: 'string' }),
  held: CAPPED({ object: 'string', change: 'string', reason: 'string' }),
  requests: { fields: { total: 'number', writes: 'number', retries: 'number', throttled: 'number', errors: 'number' } },
};

/** Fields added later: absent in an older record means null. */
const LATER: Fields = {
  reactions: {
    nullable: {
      passes: 'number',
      nodesInitialized: 'number',
      loadBalancersCreated: 'number',
      loadBalancersUpdated: 'number',
      loadBalancersDeleted: 'number',
      failures: 'number',
      last: { nullable: { changes: 'string', finishedAt: 'string', durationMs: 'number', failures: 'number' } },
    },
  },
  watching: { nullable: { since: 'string', until: 'string' } },
};

const RESULTS: readonly string[] = ['succeeded', 'partial', 'failed'];

/** The record in `text` under key `command`, or what is wrong with it (`requests is missing`). */
export function parsePassRecord(text: string, command: PassCommand): PassRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  if (!isObject(value)) return 'not a JSON object';
  if (value['command'] !== command) return `its command is ${JSON.stringify(value['command'])}, not ${command}`;
  const problem = checkFields(value, RECORD, '') ?? checkFields(value, LATER, '', true);
  if (problem !== undefined) return problem;
  if (!RESULTS.includes(value['result'] as string)) return `result ${JSON.stringify(value['result'])} is none of ${RESULTS.join(', ')}`;
  if (Number.isNaN(Date.parse(value['finishedAt'] as string))) return `finishedAt ${JSON.stringify(value['finishedAt'])} is not a time`;
  return { ...value, reactions: value['reactions'] ?? null, watching: value['watching'] ?? null } as unknown as PassRecord;
}

/** How to get past an unreadable record: the next pass replaces it, or remove the key. */
export function unreadableRecordFix(configMap: { readonly namespace: string; readonly name: string }, key: string): string {
  return (
    `the next ${key} pass writes a new record; to drop this one now: kubectl -n ${configMap.namespace} patch configmap ${configMap.name} ` +
    `--type=json -p '[{"op":"remove","path":"/data/${key}"}]'`
  );
}

function checkFields(value: Record<string, unknown>, fields: Fields, path: string, absentIsNull = false): string | undefined {
  for (const [field, shape] of Object.entries(fields)) {
    const at = `${path}${field}`;
    if (!(field in value)) {
      if (absentIsNull) continue;
      return `${at} is missing`;
    }
    const problem = check(value[field], shape, at);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function check(value: unknown, shape: Shape, at: string): string | undefined {
  const wrong = (what: string) => `${at} is ${JSON.stringify(value)}, not ${what}`;
  switch (shape) {
    case 'string':
      return typeof value === 'string' ? undefined : wrong('a string');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : wrong('a number');
    case 'string?':
      return value === null || typeof value === 'string' ? undefined : wrong('a string or null');
    case 'counts':
      return isObject(value) && Object.values(value).every((n) => typeof n === 'number') ? undefined : wrong('counts by name');
  }
  if ('nullable' in shape && value === null) return undefined;
  if ('list' in shape) {
    if (!Array.isArray(value)) return wrong('a list');
    for (const [i, item] of value.entries()) {
      const problem = check(item, { fields: shape.list }, `${at}[${i}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (!isObject(value)) return wrong('an object');
  return checkFields(value, 'nullable' in shape ? shape.nullable : shape.fields, `${at}.`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
