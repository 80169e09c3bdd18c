// The second step of `npm run build`, after tsc: bundles what dist/ imports from
// @kubernetes/client-node (with undici, ws, jose… about 1100 modules) into one file,
// dist/vendor/client-node.js, and points dist/'s imports there. Loading one file instead of ~1100
// cuts the start of every command that talks to the cluster (docs/benchmarks.md, "Startup").
// The bundle is rebuilt only when the imported names or client-node's version change. Without
// rolldown (a dev dependency) dist/ keeps importing the package: slower to start, same behaviour.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@kubernetes/client-node';
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const bundle = join(dist, 'vendor', 'client-node.js');
// An import of the package, or one this script already pointed at the bundle (a second run).
const importFrom = new RegExp(`^import \\{([^}]*)\\} from '(?:${PACKAGE}|(?:\\.\\.?/)+vendor/client-node\\.js)';$`, 'gm');

const files = readdirSync(dist, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.js') && !join(entry.parentPath, entry.name).startsWith(dirname(bundle)))
  .map((entry) => join(entry.parentPath, entry.name));
const sources = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));
const names = new Set();
for (const text of sources.values()) {
  for (const match of text.matchAll(importFrom)) for (const name of match[1].split(',')) if (name.trim()) names.add(name.trim());
}

if (names.size === 0) {
  process.stderr.write(`vendor-client-node: nothing in dist/ imports ${PACKAGE} (run tsc first)\n`);
  process.exit(1);
}

const version = JSON.parse(readFileSync(join(root, 'node_modules', PACKAGE, 'package.json'), 'utf8')).version;
const banner = `// ${PACKAGE} ${version} bundled by scripts/vendor-client-node.js: ${[...names].sort().join(', ')}`;
if (!(existsSync(bundle) && readFileSync(bundle, 'utf8').startsWith(`${banner}\n`))) {
  let build;
  try {
    ({ build } = await import('rolldown'));
  } catch {
    process.stderr.write(`vendor-client-node: rolldown is not installed; dist/ imports ${PACKAGE} module by module (slower start)\n`);
    process.exit(0);
  }
  mkdirSync(dirname(bundle), { recursive: true });
  const entry = join(dirname(bundle), 'client-node.entry.js');
  writeFileSync(entry, `export { ${[...names].sort().join(', ')} } from '${PACKAGE}';\n`);
  try {
    await build({
      input: entry,
      platform: 'node',
      logLevel: 'warn',
      output: { file: bundle, format: 'esm', banner },
    });
  } finally {
    rmSync(entry, { force: true });
  }
}

for (const [file, text] of sources) {
  if (!text.includes(`from '${PACKAGE}'`)) continue;
  const target = relative(dirname(file), bundle).split(sep).join('/');
  writeFileSync(file, text.replaceAll(`from '${PACKAGE}';`, `from '${target.startsWith('.') ? target : `./${target}`}';`));
}
