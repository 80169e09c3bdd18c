// The token in no encoding (src/core/cloudscale/redaction.ts): an answer that echoes the
// Authorization header in any form an intermediary may use keeps nothing from which the token
// can be read. Each form is made here with Node's own encoders, embedded in a longer text, and
// the redacted text is then decoded back the way a reader would: no decoding shows the token.
import { describe, expect, test } from 'vitest';
import { redactToken } from '../../src/core/cloudscale/settings.js';

const TOKENS = {
  'letters and digits': 'Hc7KqZ2mT9xWb4NvL0sRy8Fd',
  symbols: `s3cr3t+/=&<>"'%Tok-en_9~!`,
};

/** The Authorization header a proxy echoes, written the ways an intermediary may write it. */
const FORMS: Readonly<Record<string, (header: string) => string>> = {
  raw: (h) => h,
  'upper-case': (h) => h.toUpperCase(),
  'lower-case': (h) => h.toLowerCase(),
  'JSON-escaped': (h) => JSON.stringify(h).slice(1, -1),
  'URL-encoded': (h) => encodeURIComponent(h),
  'URL-encoded, lower-case escapes': (h) => encodeURIComponent(h).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
  'form-encoded': (h) => new URLSearchParams({ h }).toString().slice(2),
  'HTML-escaped, named': (h) => h.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!),
  'HTML-escaped, decimal': (h) => h.replace(/[^a-z0-9 ]/gi, (c) => `&#${c.charCodeAt(0)};`),
  'HTML-escaped, hex': (h) => h.replace(/[^a-z0-9 ]/gi, (c) => `&#x${c.charCodeAt(0).toString(16)};`),
  'hex, lower case': (h) => Buffer.from(h).toString('hex'),
  'hex, upper case': (h) => Buffer.from(h).toString('hex').toUpperCase(),
  base64: (h) => Buffer.from(h).toString('base64'),
  'base64 without padding': (h) => Buffer.from(h).toString('base64').replace(/=+$/, ''),
  base64url: (h) => Buffer.from(h).toString('base64url'),
  'base64url with padding': (h) => Buffer.from(h).toString('base64').replaceAll('+', '-').replaceAll('/', '_'),
};

/** Every way of reading `text` back: as is, any case, each unescaping, hex and base64 runs at every alignment. */
function readings(text: string): string[] {
  const out = [text, text.toLowerCase()];
  const tryOr = (f: () => string) => {
    try {
      return f();
    } catch {
      return '';
    }
  };
  out.push(tryOr(() => decodeURIComponent(text)), tryOr(() => decodeURIComponent(text.replaceAll('+', ' '))));
  out.push(text.replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/&#(\d+);/g, (_, d: string) => String.fromCharCode(Number(d))).replace(/&(amp|lt|gt|quot|apos);/g, (_, n: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[n]!));
  out.push(tryOr(() => JSON.parse(`"${text}"`) as string));
  for (const run of text.match(/[0-9a-f]{8,}/gi) ?? []) for (const start of [0, 1]) out.push(Buffer.from(run.slice(start), 'hex').toString('latin1'));
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    for (let start = 0; start < 4; start++) {
      const chars = run.slice(start).replaceAll('-', '+').replaceAll('_', '/');
      out.push(Buffer.from(chars.slice(0, chars.length - (chars.length % 4)), 'base64').toString('latin1'));
    }
  }
  return out;
}

describe.each(Object.entries(TOKENS))('a token of %s', (_, token) => {
  // The three prefixes put the token at each of base64's three alignments.
  describe.each(['', 'X', 'XY'])('behind the prefix "%s"', (prefix) => {
    test.each(Object.entries(FORMS))('%s: redacted, and no reading of what is left shows the token', (_, encode) => {
      const echoed = encode(`${prefix}Authorization: Bearer ${token}`);
      const answer = `{"detail": "Unexpected header: ${echoed}", "code": 400}`;
      const redacted = redactToken(answer, token);
      expect(redacted).toContain('[redacted]');
      for (const reading of readings(redacted)) {
        expect(reading.toLowerCase().includes(token.toLowerCase()), `readable in ${JSON.stringify(redacted)}`).toBe(false);
      }
    });
  });

  test('text without the token is left as it is, whatever its encodings', () => {
    const text = `{"detail": "Not found.", "uuid": "4f2b8c1e-2d3a-4b5c-9e8f-0a1b2c3d4e5f", "b64": "${Buffer.from('another value entirely').toString('base64')}"}`;
    expect(redactToken(text, token)).toBe(text);
  });
});

test('a short token is still redacted as it is (its encodings could match by chance, they are left)', () => {
  expect(redactToken('header: Bearer ab1 and AB1', 'ab1')).toBe('header: Bearer [redacted] and [redacted]');
});
