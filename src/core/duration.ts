// Durations on the command line, written the way kubectl and Go write them: `90s`, `5m`,
// `1h30m`, `2h`, `500ms`. A bare number is not accepted: "10" could mean seconds or minutes, and
// a flag that guards an alert must not be misread.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/**
 * The length of `text` in milliseconds, or a sentence saying what is wrong with it (for the
 * caller's UsageError, which names the flag).
 */
export function parseDuration(text: string): { ms: number } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { problem: 'is empty' };
  if (/^\d+(\.\d+)?$/.test(trimmed)) return { problem: `"${text}" has no unit` };
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const at = PART.lastIndex;
    const match = PART.exec(trimmed);
    if (match === null) return { problem: `"${text}" is not a duration${at === 0 ? '' : ` (at "${trimmed.slice(at)}")`}` };
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
  }
  // Beyond this, milliseconds are no longer exact integers and the text written back (manifests
  // write durations into the CronJob's args) would not parse: "1e+23h".
  if (total > Number.MAX_SAFE_INTEGER) return { problem: `"${text}" is too long (at most about 285,000 years)` };
  return { ms: total };
}

/** The units parseDuration knows, for hints. */
export const DURATION_EXAMPLES = '90s, 5m, 1h30m, 2d';

/** A duration for people: `45 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 === 0 ? `${minutes} min` : `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}
