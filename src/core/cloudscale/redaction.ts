// The API token in every form an intermediary may echo it. A proxy's error page or a debugging
// server may repeat the request's Authorization header, and not only as it was sent: escaped
// for JSON, a URL or HTML, hex- or base64-encoded (a header dump), upper-cased. Any of these
// forms in an answer would carry the token into errors, Events, the status record and logs, so
// every answer is redacted before it is kept anywhere (transport.ts), in all of them.
//
// Base64 needs care: the token inside a longer encoded text (`Authorization: Bearer <token>`)
// starts at one of three alignments, each encoding it differently. For each, the characters that
// only the token's bytes determine are redacted; what is left at the edges are a few bits of its
// first and last byte, from which the token cannot be read.

export const REDACTED = '[redacted]';

/** Forms shorter than this are not redacted: they could occur in any text by chance. */
const MIN_FORM_LENGTH = 8;

/** A function that replaces every form of `token` in a text; the forms are computed once. */
export function tokenRedactor(token: string): (text: string) => string {
  if (token === '') return (text) => text;
  // The token itself is redacted whatever its length; the encodings only when long enough.
  const caseless = alternation(caselessForms(token), 1);
  const exact = alternation(base64Forms(token), MIN_FORM_LENGTH);
  const caselessPattern = caseless === undefined ? undefined : new RegExp(caseless, 'gi');
  const exactPattern = exact === undefined ? undefined : new RegExp(exact, 'g');
  return (text) => {
    let out = text;
    if (caselessPattern !== undefined) out = out.replace(caselessPattern, REDACTED);
    if (exactPattern !== undefined) out = out.replace(exactPattern, REDACTED);
    return out;
  };
}

/**
 * The forms that keep their meaning when their letters change case: the token itself, as JSON,
 * a URL (percent- and form-encoded) and HTML (named, decimal and hex entities) escape it, and
 * its bytes in hex. Matched regardless of case, which covers an upper-cased header too.
 */
export function caselessForms(token: string): string[] {
  const bytes = Buffer.from(token, 'utf8');
  return [
    token,
    JSON.stringify(token).slice(1, -1),
    encodeURIComponent(token),
    new URLSearchParams({ t: token }).toString().slice(2),
    ...htmlForms(token),
    bytes.toString('hex'),
  ];
}

/** The token's base64 and base64url encodings, with and without padding, at each of the three alignments. */
export function base64Forms(token: string): string[] {
  const bytes = Buffer.from(token, 'utf8');
  const forms: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Characters wholly within the token's bits: from bit 8·offset to bit 8·(offset + n).
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    const inner = encoded.slice(first, end);
    // Alone (offset 0) it may be written out whole, with its padding.
    const whole = offset === 0 ? [encoded, encoded.replace(/=+$/, '')] : [];
    for (const form of [...whole, inner]) forms.push(form, form.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * `token` as HTML may escape it: the five characters HTML must escape by name (`'` as `&#39;` or
 * `&apos;`) or by number, or every character but letters and digits by number, decimal or hex.
 */
function htmlForms(token: string): string[] {
  const decimal = (c: string) => `&#${c.codePointAt(0)!};`;
  const hex = (c: string) => `&#x${c.codePointAt(0)!.toString(16)};`;
  const five = (entity: (c: string) => string) => token.replace(/[&<>"']/g, entity);
  const everyOther = (entity: (c: string) => string) => token.replace(/[^a-z0-9]/gi, entity);
  return [
    five((c) => NAMED_ENTITIES[c]!),
    five((c) => (c === "'" ? '&apos;' : NAMED_ENTITIES[c]!)),
    five(decimal),
    five(hex),
    everyOther(decimal),
    everyOther(hex),
  ];
}

/** One regular expression source matching any of the forms, longest first; undefined when none is long enough. */
function alternation(forms: readonly string[], minLength: number): string | undefined {
  const distinct = [...new Set(forms)].filter((form) => form.length >= minLength).sort((a, b) => b.length - a.length);
  if (distinct.length === 0) return undefined;
  return distinct.map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
}
