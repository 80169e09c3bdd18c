// Validation of a CronJob schedule before it is printed into a manifest, so a typo fails at
// `cloudscale-ccm manifests` instead of as an API error during `kubectl apply`. It follows the
// grammar the CronJob controller accepts (the standard five-field cron of robfig/cron v3):
// lists, ranges, steps, month and weekday names, `?` as `*`, and the @hourly-style macros.

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Three-letter names, index = value - min. */
  readonly names?: readonly string[];
}

const FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  { name: 'day-of-week', min: 0, max: 6, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Returns undefined for a valid schedule, otherwise one sentence saying what is wrong. */
export function cronScheduleProblem(schedule: string): string | undefined {
  const trimmed = schedule.trim();
  if (trimmed === '') return 'the schedule is empty';
  if (/^(CRON_)?TZ=/.test(trimmed)) {
    return 'time zones are not accepted in the schedule (the CronJob runs in the controller-manager time zone)';
  }
  if (trimmed.startsWith('@')) {
    return MACROS.has(trimmed.toLowerCase())
      ? undefined
      : `unknown macro ${trimmed} (accepted: ${[...MACROS].join(', ')})`;
  }
  const parts = trimmed.split(/\s+/);
  if (parts.length !== FIELDS.length) {
    return `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`;
  }
  for (const [index, field] of FIELDS.entries()) {
    const problem = fieldProblem(parts[index] as string, field);
    if (problem !== undefined) return `${field.name} field "${parts[index]}": ${problem}`;
  }
  return undefined;
}

function fieldProblem(text: string, field: CronField): string | undefined {
  for (const item of text.split(',')) {
    const problem = itemProblem(item, field);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** One list item: `*`, `?`, `a`, `a-b`, each optionally followed by `/step`. */
function itemProblem(item: string, field: CronField): string | undefined {
  if (item === '') return 'empty list item';
  const [range, step, ...extra] = item.split('/');
  if (extra.length > 0) return `more than one "/" in "${item}"`;
  if (step !== undefined && !/^[1-9][0-9]*$/.test(step)) return `step "${step}" is not a whole number ≥ 1`;
  if (range === '*' || range === '?') return undefined;
  const bounds = (range as string).split('-');
  if (bounds.length > 2) return `"${range}" is not a value or a range a-b`;
  const values: number[] = [];
  for (const bound of bounds) {
    const value = valueOf(bound, field);
    if (value === undefined) {
      const names = field.names === undefined ? '' : ` or ${field.names[0]}–${field.names.at(-1)}`;
      return `"${bound}" is not in ${field.min}–${field.max}${names}`;
    }
    values.push(value);
  }
  const [low, high] = values as [number, number | undefined];
  if (high !== undefined && high < low) return `range "${range}" ends before it starts`;
  return undefined;
}

function valueOf(text: string, field: CronField): number | undefined {
  if (/^[0-9]+$/.test(text)) {
    const value = Number(text);
    return value >= field.min && value <= field.max ? value : undefined;
  }
  const index = field.names?.indexOf(text.toUpperCase()) ?? -1;
  return index === -1 ? undefined : field.min + index;
}
