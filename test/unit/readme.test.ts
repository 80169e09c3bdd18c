import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderAnnotationReference } from '../../src/core/lb/annotations.js';
import { generatedSection, replaceGeneratedSection } from '../../src/core/render/readme.js';

describe('README generated sections', () => {
  it('has the annotation reference generated from the annotation table (run `npm run docs`)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(generatedSection(readme, 'annotation-reference')).toBe(renderAnnotationReference());
  });

  it('replaces only the marked section and keeps the markers', () => {
    const doc = 'a\n<!-- x:start (note) -->\nold\n<!-- x:end -->\nb\n';
    const updated = replaceGeneratedSection(doc, 'x', 'new');
    expect(updated).toBe('a\n<!-- x:start (note) -->\nnew\n<!-- x:end -->\nb\n');
    expect(generatedSection(updated, 'x')).toBe('new\n');
  });

  it('refuses a document without the markers', () => {
    expect(() => replaceGeneratedSection('nothing here', 'x', 'y')).toThrow(/no generated section "x"/);
  });
});
