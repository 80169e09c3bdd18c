// Which vitest project a test file belongs to, decided from the file itself (no hand-kept list):
// a file that imports test/support/kube.ts, directly or through another module of test/, talks to
// a Kubernetes API server and runs where a worker has a control plane (test/support/worker-cluster.ts);
// the others need only the simulator.
//
// Imported by vitest.config.ts, so only node: modules here.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Relative imports and re-exports of a TypeScript source: `from './x.js'` and `import('./x.js')`. */
export function relativeImports(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) {
    found.push((match[1] ?? match[2])!);
  }
  return found;
}

/** The TypeScript file an import specifier of `importer` names (`./x.js` is `./x.ts` or `./x.tsx`), or undefined. */
export function resolveImport(importer: string, specifier: string): string | undefined {
  const base = resolve(dirname(importer), specifier).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}.tsx`].find((candidate) => existsSync(candidate));
}

/**
 * Whether `file` reaches `target` through relative imports inside `within` (a directory; imports
 * of src/ are not followed: product code never imports test helpers).
 */
export function reaches(file: string, target: string, within: string): boolean {
  const seen = new Set<string>();
  const stack = [resolve(file)];
  const goal = resolve(target);
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current === goal) return true;
    if (seen.has(current)) continue;
    seen.add(current);
    for (const specifier of relativeImports(readFileSync(current, 'utf8'))) {
      const next = resolveImport(current, specifier);
      if (next !== undefined && next.startsWith(`${resolve(within)}/`)) stack.push(next);
    }
  }
  return false;
}
