import { ConfigError } from '../errors.js';

/**
 * Replaces the body between `<!-- NAME:start … -->` and `<!-- NAME:end -->` with `body`.
 * The markers stay, so the section can be regenerated again; missing markers are an error.
 */
export function replaceGeneratedSection(document: string, name: string, body: string): string {
  const start = document.indexOf(`<!-- ${name}:start`);
  const startEnd = start === -1 ? -1 : document.indexOf('-->', start);
  const end = document.indexOf(`<!-- ${name}:end -->`);
  if (start === -1 || startEnd === -1 || end === -1 || end < startEnd) {
    throw new ConfigError(`the document has no generated section "${name}"`, {
      hint: `add <!-- ${name}:start --> and <!-- ${name}:end --> markers`,
    });
  }
  const head = document.slice(0, startEnd + 3);
  return `${head}\n${body.endsWith('\n') ? body : `${body}\n`}${document.slice(end)}`;
}

/** The body of a generated section, as replaceGeneratedSection wrote it. */
export function generatedSection(document: string, name: string): string | undefined {
  const start = document.indexOf(`<!-- ${name}:start`);
  const startEnd = start === -1 ? -1 : document.indexOf('-->', start);
  const end = document.indexOf(`<!-- ${name}:end -->`);
  if (start === -1 || startEnd === -1 || end === -1) return undefined;
  return document.slice(startEnd + 4, end);
}
