// The downtime budget as the command line gives it: `--max-downtime DURATION`, and optionally
// `--window "DAYS HH:MM-HH:MM ZONE=DURATION"`, a maintenance window in a named time zone in
// which another (usually larger) budget applies. Parsing fails with a UsageError naming the
// value; `budgetSecondsAt` answers the budget at a given instant (the clock is the caller's).
import { parseDuration as parseDurationText } from '../duration.js';
import { UsageError } from '../errors.js';
import { quoteUntrusted } from '../text/untrusted.js';

/** A maintenance window: on `days` (0 = Sunday, local to `timeZone`) from `startMinute` to `endMinute`. */
export interface MaintenanceWindow {
  readonly days: ReadonlySet<number>;
  /** Minutes after local midnight; the window ends at `endMinute`, the next day when it is not after `startMinute`. */
  readonly startMinute: number;
  readonly endMinute: number;
  /** An IANA time zone, e.g. `Europe/Zurich`. */
  readonly timeZone: string;
  /** The budget inside the window, in seconds. */
  readonly seconds: number;
  /** The window as written. */
  readonly text: string;
}

export interface BudgetPolicy {
  /** The budget outside the window, in seconds. */
  readonly seconds: number;
  readonly window?: MaintenanceWindow;
}

const DURATION_HINT = 'write a duration like 0s, 15s, 2m or 1h30m (hours, minutes, seconds; not negative)';
const WINDOW_FORMAT = '"DAYS HH:MM-HH:MM ZONE=DURATION", e.g. "Mon-Fri 02:00-04:00 Europe/Zurich=5m" (DAYS: Mon,Tue,…,Sun, ranges like Mon-Fri, or daily)';
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/** Seconds of `0s`, `15s`, `2m`, `1h30m` (src/core/duration.ts). `flag` names the option in the error. */
export function parseDuration(raw: string, flag: string): number {
  if (raw.trim().startsWith('-')) throw new UsageError(`${flag}: a negative duration: ${quoteUntrusted(raw)}`, { hint: DURATION_HINT });
  const parsed = parseDurationText(raw);
  // The problem names the value itself ("15" has no unit), except an empty one.
  if ('problem' in parsed) throw new UsageError(`${flag}: ${parsed.problem === 'is empty' ? 'the duration is empty' : parsed.problem}`, { hint: DURATION_HINT });
  return parsed.ms / 1000;
}

/** A window as `--window` takes it; see WINDOW_FORMAT. */
export function parseWindow(raw: string, flag = '--window'): MaintenanceWindow {
  const bad = (why: string) =>
    new UsageError(`${flag}: ${why}: ${quoteUntrusted(raw)}`, { hint: `write the window as ${WINDOW_FORMAT}` });
  const match = /^\s*(\S+)\s+(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})\s+([^=\s]+)\s*=\s*(\S+)\s*$/.exec(raw);
  if (match === null) throw bad('not a window');
  const [, daysText, h1, m1, h2, m2, timeZone, duration] = match as unknown as [string, string, string, string, string, string, string, string];
  const days = parseDays(daysText);
  if (days === null) throw bad(`unknown days ${quoteUntrusted(daysText)}`);
  const startMinute = Number(h1) * 60 + Number(m1);
  const endMinute = Number(h2) * 60 + Number(m2);
  if (Number(h1) > 23 || Number(m1) > 59 || Number(h2) > 24 || Number(m2) > 59 || endMinute > 24 * 60) throw bad('not a time of day');
  if (startMinute === endMinute) throw bad('the window is empty (start and end are the same)');
  if (!isTimeZone(timeZone)) {
    throw new UsageError(`${flag}: unknown time zone ${quoteUntrusted(timeZone)} in ${quoteUntrusted(raw)}`, {
      hint: 'name an IANA time zone, e.g. Europe/Zurich or UTC',
    });
  }
  return { days, startMinute, endMinute, timeZone, seconds: parseDuration(duration, `${flag} (budget after =)`), text: raw.trim() };
}

/** The command-line options of the budget, as their parsers give them. */
export interface BudgetOptions {
  /** `--max-downtime`, in seconds. */
  readonly maxDowntime?: number;
  /** `--window`. */
  readonly window?: MaintenanceWindow;
}

/** The policy the options ask for (`undefined`: no budget, nothing held); a window alone is a usage error. */
export function budgetPolicy(options: BudgetOptions): BudgetPolicy | undefined {
  if (options.maxDowntime === undefined) {
    if (options.window === undefined) return undefined;
    throw new UsageError(`--window ${quoteUntrusted(options.window.text)} needs --max-downtime: the budget outside the window`, {
      hint: 'add --max-downtime, e.g. --max-downtime 0s (nothing that interrupts a port is applied outside the window)',
    });
  }
  return { seconds: options.maxDowntime, ...(options.window === undefined ? {} : { window: options.window }) };
}

/** The budget in seconds at `nowMs`: the window's inside it, else the policy's. */
export function budgetSecondsAt(policy: BudgetPolicy, nowMs: number): number {
  return policy.window !== undefined && insideWindow(policy.window, nowMs) ? policy.window.seconds : policy.seconds;
}

/** Whether `nowMs` falls inside the window (local days and hours of its time zone). */
export function insideWindow(window: MaintenanceWindow, nowMs: number): boolean {
  const { day, minute } = localTime(nowMs, window.timeZone);
  if (window.startMinute < window.endMinute) {
    return window.days.has(day) && minute >= window.startMinute && minute < window.endMinute;
  }
  // Across midnight: it begins on a listed day and ends the next morning.
  return (window.days.has(day) && minute >= window.startMinute) || (window.days.has((day + 6) % 7) && minute < window.endMinute);
}

function localTime(nowMs: number, timeZone: string): { day: number; minute: number } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(
    new Date(nowMs),
  );
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return { day: DAY_NAMES.indexOf(part('weekday').toLowerCase() as (typeof DAY_NAMES)[number]), minute: Number(part('hour')) * 60 + Number(part('minute')) };
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** `Mon-Fri`, `Sat,Sun`, `Mon,Wed-Fri`, `Fri-Mon` (wraps), `daily`; `null` when not days. */
function parseDays(text: string): Set<number> | null {
  const lower = text.toLowerCase();
  if (lower === 'daily') return new Set([0, 1, 2, 3, 4, 5, 6]);
  const days = new Set<number>();
  for (const item of lower.split(',')) {
    const [from, to = from] = item.split('-') as [string, string?];
    const a = DAY_NAMES.indexOf(from as (typeof DAY_NAMES)[number]);
    const b = DAY_NAMES.indexOf(to as (typeof DAY_NAMES)[number]);
    if (a === -1 || b === -1 || item.split('-').length > 2) return null;
    for (let d = a; ; d = (d + 1) % 7) {
      days.add(d);
      if (d === b) break;
    }
  }
  return days;
}
