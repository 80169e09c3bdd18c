// Text from outside (annotation values, names read from the cloudscale API, error bodies) is
// shown to people only through these helpers. A control character is written as an escape,
// never raw: a value cannot end a line early, move the cursor, recolour or clear a terminal, or
// hide part of itself in a log or in `kubectl describe`.

/**
 * What is never printed raw: C0 and C1 control characters and DEL (`\p{Cc}`), the Unicode line
 * and paragraph separators (they end a line in many viewers), and the bidirectional controls
 * (they reorder what follows them, so shown text would not be the text).
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `\u0000`, `\n`: how one unprintable character is shown. */
function escapeCharacter(character: string): string {
  return SHORT_ESCAPES[character] ?? `\\u${character.codePointAt(0)!.toString(16).padStart(4, '0')}`;
}

/** Whether `text` holds a character that is never printed raw (see UNPRINTABLE). */
export function hasUnprintable(text: string): boolean {
  UNPRINTABLE.lastIndex = 0;
  return UNPRINTABLE.test(text);
}

/** The first unprintable character of `text` as `U+000A at position 4` (1-based), or null. */
export function firstUnprintable(text: string): string | null {
  let position = 0;
  for (const character of text) {
    position += 1;
    UNPRINTABLE.lastIndex = 0;
    if (UNPRINTABLE.test(character)) {
      return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at position ${position}`;
    }
  }
  return null;
}

/** `text` with every unprintable character escaped; everything else as it is. */
export function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, escapeCharacter);
}

/** Longest untrusted value quoted whole; a longer one is cut and its length given. */
export const QUOTE_MAX_CHARACTERS = 200;

/**
 * An untrusted value for a message: in double quotes, `"` and `\` escaped as in JSON, every
 * unprintable character escaped, and a value longer than QUOTE_MAX_CHARACTERS cut (counted in
 * characters, not UTF-16 units) with its length named.
 */
export function quoteUntrusted(text: string): string {
  const characters = [...text];
  const shown = characters.length > QUOTE_MAX_CHARACTERS ? characters.slice(0, QUOTE_MAX_CHARACTERS).join('') : text;
  const body = escapeUnprintable(shown.replaceAll('\\', '\\\\').replaceAll('"', '\\"'));
  return characters.length > QUOTE_MAX_CHARACTERS ? `"${body}…" (${characters.length} characters)` : `"${body}"`;
}

/**
 * A copy of a JSON-like value with every string in it escaped, for the text views of documents.
 * An object referred to twice stays one object in the copy (views compare by identity).
 */
export function escapeStrings<T>(value: T): T {
  const copies = new Map<object, unknown>();
  const copy = (item: unknown): unknown => {
    if (typeof item === 'string') return escapeUnprintable(item);
    if (typeof item !== 'object' || item === null || item instanceof Date) return item;
    const known = copies.get(item);
    if (known !== undefined) return known;
    if (Array.isArray(item)) {
      const list: unknown[] = [];
      copies.set(item, list);
      for (const entry of item) list.push(copy(entry));
      return list;
    }
    const record: Record<string, unknown> = {};
    copies.set(item, record);
    for (const [key, entry] of Object.entries(item)) record[escapeUnprintable(key)] = copy(entry);
    return record;
  };
  return copy(value) as T;
}
