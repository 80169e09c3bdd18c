// The second step of `npm run build`, after tsc: bundles what dist/ imports from the heaviest
// dependencies into one file each under dist/vendor/ (@kubernetes/client-node with undici, ws,
// jose… is about 1100 modules; yaml 72), and points dist/'s imports there. Loading one file
// instead of hundreds cuts the start of every command (docs/benchmarks.md, "Startup"). A bundle
// is rebuilt only when the imported names or the package's version change. Without rolldown (a
// dev dependency) dist/ keeps importing the packages: slower to start, same behaviour.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGES = [
  { name: '@kubernetes/client-node', file: 'client-node.js' },
  { name: 'yaml', file: 'yaml.js' },
];
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const vendor = join(dist, 'vendor');

const files = readdirSync(dist, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.js') && entry.parentPath !== vendor)
  .map((entry) => join(entry.parentPath, entry.name));
const sources = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));

let build;
try {
  ({ build } = await import('rolldown'));
} catch {
  process.stderr.write('vendor: rolldown is not installed; dist/ imports its dependencies module by module (slower start)\n');
  process.exit(0);
}

for (const pkg of PACKAGES) {
  const bundle = join(vendor, pkg.file);
  // An import of the package, or one a previous run already pointed at the bundle.
  const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const importFrom = new RegExp(`^import \\{([^}]*)\\} from '(?:${escaped(pkg.name)}|(?:\\.\\.?/)+vendor/${escaped(pkg.file)})';$`, 'gm');
  const names = new Set();
  for (const text of sources.values()) {
    for (const match of text.matchAll(importFrom)) {
      // `stringify as toYaml` imports `stringify`.
      for (const name of match[1].split(',')) if (name.trim()) names.add(name.trim().split(/\s+as\s+/)[0]);
    }
  }
  if (names.size === 0) {
    process.stderr.write(`vendor: nothing in dist/ imports ${pkg.name} (run tsc first)\n`);
    process.exit(1);
  }

  const version = JSON.parse(readFileSync(join(root, 'node_modules', pkg.name, 'package.json'), 'utf8')).version;
  const banner = `// ${pkg.name} ${version} bundled by scripts/vendor.js: ${[...names].sort().join(', ')}`;
  if (!(existsSync(bundle) && readFileSync(bundle, 'utf8').startsWith(`${banner}\n`))) {
    mkdirSync(vendor, { recursive: true });
    const entry = join(vendor, `${pkg.file}.entry.js`);
    writeFileSync(entry, `export { ${[...names].sort().join(', ')} } from '${pkg.name}';\n`);
    try {
      await build({ input: entry, platform: 'node', logLevel: 'warn', output: { file: bundle, format: 'esm', banner } });
    } finally {
      rmSync(entry, { force: true });
    }
  }

  for (const [file, text] of sources) {
    if (!text.includes(`from '${pkg.name}';`)) continue;
    const target = relative(dirname(file), bundle).split(sep).join('/');
    const rewritten = text.replaceAll(`from '${pkg.name}';`, `from '${target.startsWith('.') ? target : `./${target}`}';`);
    sources.set(file, rewritten);
    writeFileSync(file, rewritten);
  }
}
