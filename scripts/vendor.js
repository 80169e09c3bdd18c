// The second step of `npm run build`, after tsc: bundles what dist/ imports from the heaviest
// dependencies into one file each under dist/vendor/, and points dist/'s imports there:
// @kubernetes/client-node with undici, ws, jose… (about 1100 modules), yaml (72), and ink with
// react, its reconciler and yoga (the live view of a terminal pass). Loading one file instead of
// hundreds cuts the start of every command (docs/benchmarks.md, "Startup"), and it is what keeps
// the published package small: the bundled packages are dev dependencies, so `npm install -g`
// does not fetch them (README, "Install"). A bundle is rebuilt only when the imported names or a
// package's version change.
//
// Contract: after this step no file of dist/ outside dist/vendor/ imports a bundled package; the
// build fails otherwise, since the published package would fail at run time without it.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One bundle per file. Packages that must share one instance go into the same bundle: the JSX
 * that tsc emits (react/jsx-runtime) and ink must use one React.
 */
const BUNDLES = [
  { file: 'client-node.js', packages: ['@kubernetes/client-node'] },
  { file: 'yaml.js', packages: ['yaml'] },
  // Production React, as NODE_ENV=production would choose at run time (the image sets it).
  { file: 'ink.js', packages: ['ink', 'react/jsx-runtime'], define: { 'process.env.NODE_ENV': '"production"' } },
];
/**
 * Imported by ink only when DEV=true and the package resolves, which it never does next to the
 * bundle; a stub keeps the bundle free of an import of a package that is not installed.
 */
const ABSENT_OPTIONAL = ['react-devtools-core'];

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const vendor = join(dist, 'vendor');

function fail(message) {
  process.stderr.write(`vendor: ${message}\n`);
  process.exit(1);
}

const files = readdirSync(dist, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.js') && entry.parentPath !== vendor)
  .map((entry) => join(entry.parentPath, entry.name));
const sources = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));

let build;
try {
  ({ build } = await import('rolldown'));
} catch {
  fail('rolldown (a dev dependency) is not installed: run `npm ci` first; without the bundles dist/ would import packages the published package does not install');
}

const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const versionOf = (specifier) =>
  JSON.parse(readFileSync(join(root, 'node_modules', packageOf(specifier), 'package.json'), 'utf8')).version;

for (const bundle of BUNDLES) {
  const bundlePath = join(vendor, bundle.file);
  /** Per package: the names dist/ imports from it (`stringify as toYaml` imports `stringify`). */
  const imported = new Map(bundle.packages.map((name) => [name, new Set()]));
  /** Which package of this bundle exports a name: two packages must not export the same one. */
  const owner = new Map();
  for (const name of bundle.packages) {
    // tsc keeps the quotes of the source, and writes double quotes for the JSX runtime.
    const importFrom = new RegExp(`^import \\{([^}]*)\\} from (['"])${escaped(name)}\\2;$`, 'gm');
    for (const text of sources.values()) {
      for (const match of text.matchAll(importFrom)) {
        for (const item of match[1].split(',')) {
          const exported = item.trim().split(/\s+as\s+/)[0];
          if (!exported) continue;
          if (owner.has(exported) && owner.get(exported) !== name) {
            fail(`${exported} is imported from both ${owner.get(exported)} and ${name}, which share ${bundle.file}`);
          }
          owner.set(exported, name);
          imported.get(name).add(exported);
        }
      }
    }
  }

  const names = [...owner.keys()].sort();
  if (names.length === 0) {
    // A second run without tsc in between finds dist/ already pointed at the bundles.
    const alreadyBundled = [...sources.values()].some((text) => text.includes(`/vendor/${bundle.file}`));
    if (alreadyBundled && existsSync(bundlePath)) continue;
    fail(`nothing in dist/ imports ${bundle.packages.join(' or ')} (run tsc first)`);
  }
  const versions = bundle.packages.map((name) => `${name} ${versionOf(name)}`).join(', ');
  const banner = `// ${versions} bundled by scripts/vendor.js: ${names.join(', ')}`;
  if (!(existsSync(bundlePath) && readFileSync(bundlePath, 'utf8').startsWith(`${banner}\n`))) {
    mkdirSync(vendor, { recursive: true });
    const entry = join(vendor, `${bundle.file}.entry.js`);
    const exports = bundle.packages
      .filter((name) => imported.get(name).size > 0)
      .map((name) => `export { ${[...imported.get(name)].sort().join(', ')} } from '${name}';\n`);
    writeFileSync(entry, exports.join(''));
    const stub = {
      name: 'absent-optional',
      resolveId: (id) => (ABSENT_OPTIONAL.includes(id) ? `\0absent:${id}` : null),
      load: (id) =>
        id.startsWith('\0absent:') ? `throw new Error(${JSON.stringify(`${id.slice(8)} is not part of this build`)});\nexport default undefined;\n` : null,
    };
    try {
      await build({
        input: entry,
        platform: 'node',
        logLevel: 'warn',
        plugins: [stub],
        ...(bundle.define === undefined ? {} : { transform: { define: bundle.define } }),
        output: { file: bundlePath, format: 'esm', banner, codeSplitting: false },
      });
    } finally {
      rmSync(entry, { force: true });
    }
  }

  for (const [file, text] of sources) {
    const target = relative(dirname(file), bundlePath).split(sep).join('/');
    const specifier = target.startsWith('.') ? target : `./${target}`;
    let rewritten = text;
    for (const name of bundle.packages) {
      rewritten = rewritten.replaceAll(`from '${name}';`, `from '${specifier}';`).replaceAll(`from "${name}";`, `from "${specifier}";`);
    }
    if (rewritten === text) continue;
    sources.set(file, rewritten);
    writeFileSync(file, rewritten);
  }
}

// Any other form of import (a default import, `import *`, a dynamic import) would have been left
// pointing at a package that the published package does not install.
const bundled = BUNDLES.flatMap((bundle) => bundle.packages.map(packageOf));
for (const [file, text] of sources) {
  for (const name of bundled) {
    const left = new RegExp(`(?:from |import\\(|require\\()(['"])${escaped(name)}(?:/[^'"]*)?\\1`).exec(text);
    if (left) fail(`${relative(root, file)} still imports ${name} (${left[0]}): only \`import { … } from '${name}'\` is bundled`);
  }
}
