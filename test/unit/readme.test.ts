import { readdirSync, readFileSync } from 'node:fs';
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

describe('README support policy', () => {
  const cluster = new URL('../../test/cluster/', import.meta.url);
  /** The Kubernetes version a module of test/cluster requires. */
  const versionOf = (goMod: URL): string => {
    const match = /^\s*k8s\.io\/kubernetes (v1\.\d+\.\d+)/m.exec(readFileSync(goMod, 'utf8'));
    if (match === null) throw new Error(`${goMod.pathname} requires no k8s.io/kubernetes`);
    return match[1]!;
  };

  it('lists exactly the Kubernetes versions of test/cluster, the default first', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Supported Kubernetes versions'));
    const rows = [...section.slice(0, section.indexOf('\n## ', 5)).matchAll(/^\| (1\.\d+) \| (1\.\d+\.\d+) \(`(test\/cluster\/[^`]+)`/gm)].map((m) => ({
      minor: m[1]!,
      patch: `v${m[2]!}`,
      module: m[3]!,
    }));
    const further = readdirSync(cluster)
      .filter((name) => /^v1\.\d+$/.test(name))
      .map((name) => ({ module: `test/cluster/${name}`, patch: versionOf(new URL(`${name}/go.mod`, cluster)) }));
    const expected = [{ module: 'test/cluster/go.mod', patch: versionOf(new URL('go.mod', cluster)) }, ...further];
    expect(rows.map(({ module, patch }) => ({ module, patch })).sort((a, b) => a.module.localeCompare(b.module))).toEqual(
      expected.sort((a, b) => a.module.localeCompare(b.module)),
    );
    expect(rows[0]!.module).toBe('test/cluster/go.mod');
    for (const row of rows) expect(row.patch.startsWith(`v${row.minor}.`)).toBe(true);
  });
});
