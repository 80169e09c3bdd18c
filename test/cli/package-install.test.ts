// The published package, as a user gets it: `npm pack` of the built tree, `npm install -g` of
// that tarball into a fresh prefix, and the installed command run from a directory outside the
// repository against the test cluster and a simulator the installed package starts itself.
// What it proves: the tarball holds what every subcommand needs (the bundles of dist/vendor, the
// shipped folders, every `bin` entry), the install fetches only the runtime dependencies and
// warns about nothing, and a Node older than 22 gets advice that works for an installed package.
//
// Sizes are printed (README, "Install"); the ceilings below fail a change that brings a bundled
// package back as a runtime dependency (the install was 117 MB with @kubernetes/client-node).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, TEST_TOKEN, type BinaryResult } from '../support/ccm.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
};
const TARBALL_CEILING_BYTES = 2_500_000;
const INSTALL_CEILING_BYTES = 15_000_000;

/** npm and every `#!/usr/bin/env node` run on the Node of this test (24), not an older system Node. */
const env = { ...process.env, PATH: [dirname(process.execPath), process.env.PATH].join(delimiter) };
let work: string;
let prefix: string;
let tarball: string;
let installLog: string;

/** Apparent size of a file or a tree, in bytes (what `du -s --apparent-size -B1` prints). */
function sizeOf(path: string): number {
  return Number(execFileSync('du', ['-s', '--apparent-size', '-B1', path], { encoding: 'utf8' }).split('\t')[0]);
}

function npm(args: readonly string[], cwd: string): string {
  const result = spawnSync('npm', [...args], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) throw new Error(`npm ${args.join(' ')} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

/** Runs an installed command from `work` (outside the repository) against the test cluster. */
function runInstalled(command: string, args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}, node?: string): Promise<BinaryResult> {
  return runBinary(args, { script: join(prefix, 'bin', command), cwd: work, env: { HOME: work, ...extraEnv }, ...(node === undefined ? {} : { node }) });
}

beforeAll(() => {
  if (!statSync(join(repo, 'dist', 'cli.js'), { throwIfNoEntry: false })) {
    throw new Error('dist/cli.js is missing: run `npm run build` before this test (npm test does)');
  }
  work = mkdtempSync(join(tmpdir(), 'ccm-package-'));
  prefix = join(work, 'prefix');
  // The tree is built already (npm test builds it): packing without the prepack build packs it as is.
  const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work, repo], work)) as { filename: string }[];
  tarball = join(work, packed[0]!.filename);
  // --loglevel=warn: the repository's .npmrc (loglevel=error) is not read outside it, but say so.
  installLog = npm(['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=warn', tarball], work);
  console.log(
    `package: tarball ${(sizeOf(tarball) / 1e6).toFixed(2)} MB, installed ${(sizeOf(prefix) / 1e6).toFixed(1)} MB ` +
      `(${manifest.name}@${manifest.version}, ${process.version})`,
  );
}, 180_000);
afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed and installed package', () => {
  test('installs without a warning, only the runtime dependencies, within the size ceilings', () => {
    expect(installLog).not.toMatch(/warn|ERR/i);
    const installed = join(prefix, 'lib', 'node_modules', manifest.name);
    const dependencies = readdirSync(join(installed, 'node_modules')).flatMap((entry) =>
      entry.startsWith('@') ? readdirSync(join(installed, 'node_modules', entry)).map((name) => `${entry}/${name}`) : [entry],
    );
    expect(dependencies.filter((name) => !name.startsWith('.')).sort()).toEqual(Object.keys(manifest.dependencies).sort());
    expect(sizeOf(tarball)).toBeLessThan(TARBALL_CEILING_BYTES);
    expect(sizeOf(prefix)).toBeLessThan(INSTALL_CEILING_BYTES);
  });

  test('the tarball holds the built code, its bundles and the shipped folders, and no sources, tests or source maps', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
    for (const expected of ['package/dist/cli.js', 'package/dist/vendor/client-node.js', 'package/dist/vendor/yaml.js', 'package/dist/vendor/ink.js']) {
      expect(files).toContain(expected);
    }
    for (const folder of ['completions', 'deploy', 'examples']) expect(files.some((f) => f.startsWith(`package/${folder}/`)), folder).toBe(true);
    expect(files.filter((f) => /^package\/(src|test|bench|scripts|helpers)\//.test(f) || f.endsWith('.map'))).toEqual([]);
  });

  test('the installed code imports no package but Node built-ins and the runtime dependencies', () => {
    const dist = join(prefix, 'lib', 'node_modules', manifest.name, 'dist');
    const allowed = new Set(Object.keys(manifest.dependencies));
    const strays: string[] = [];
    for (const file of readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
      // The bundles resolve their own imports; what they leave are built-ins and guarded optional requires.
      if (!file.endsWith('.js') || file.startsWith('vendor/')) continue;
      const text = readFileSync(join(dist, file), 'utf8');
      for (const match of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from ['"]([^'"]+)['"]|\bimport\(['"]([^'"]+)['"]\)/gm)) {
        const specifier = (match[1] ?? match[2])!;
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
        if (!allowed.has(name)) strays.push(`dist/${file}: ${specifier}`);
      }
    }
    expect(strays, 'a dev dependency imported at run time: bundle it (scripts/vendor.js) or make it a dependency').toEqual([]);
  });

  test('every bin entry is installed as an executable command', () => {
    for (const command of Object.keys(manifest.bin)) {
      expect(() => accessSync(join(prefix, 'bin', command), constants.X_OK), command).not.toThrow();
    }
  });

  test('--help, completion and manifests run from a directory outside the repository', async () => {
    const help = await runInstalled('cloudscale-ccm', ['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: cloudscale-ccm/);
    if ('kubectl-cloudscale' in manifest.bin) {
      const plugin = await runInstalled('kubectl-cloudscale', ['--help']);
      expect(plugin.code, plugin.stderr).toBe(0);
    }
    // The completion scripts are read from the package's completions/.
    const completion = await runInstalled('cloudscale-ccm', ['completion', 'bash']);
    expect(completion.code, completion.stderr).toBe(0);
    expect(completion.stdout).toContain('complete -');
    // An image pinned by digest, as docs/deploy.md ("The image") tells a release to deploy it.
    const pinned = `registry.example.com/cloudscale-ccm@sha256:${'0123456789abcdef'.repeat(4)}`;
    const manifests = await runInstalled('cloudscale-ccm', ['manifests', '--image', pinned]);
    expect(manifests.code, manifests.stderr).toBe(0);
    expect(manifests.stdout).toContain('kind: CronJob');
    expect(manifests.stdout).toContain(`image: ${pinned}\n`);
  });

  test('sim serves the shipped seed, and plan reads the test cluster and that simulator', async () => {
    const seed = join(prefix, 'lib', 'node_modules', manifest.name, 'examples', 'sim-seed.yaml');
    const sim = spawn(process.execPath, [join(prefix, 'bin', 'cloudscale-ccm'), 'sim', '--seed', seed, '--token', TEST_TOKEN], {
      cwd: work,
      env: { PATH: env.PATH, HOME: work },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const first = (await createInterface({ input: sim.stdout })[Symbol.asyncIterator]().next()).value as string;
      expect(first).toMatch(/^CLOUDSCALE_API_URL=http:\/\/127\.0\.0\.1:\d+$/);
      const plan = await runInstalled('cloudscale-ccm', ['plan', '-o', 'json'], { CLOUDSCALE_API_URL: first.slice('CLOUDSCALE_API_URL='.length) });
      expect(plan.code, plan.stderr).toBe(0);
      expect(JSON.parse(plan.stdout)).toMatchObject({ apiVersion: 'cloudscale-ccm/v1', kind: 'Plan' });
    } finally {
      sim.kill('SIGTERM');
      await once(sim, 'close');
    }
  });

  // The machines of this project have Debian's Node 20 as /usr/bin/node; elsewhere there may be none.
  const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' });
    return version.status === 0 && Number(/^v(\d+)/.exec(version.stdout)?.[1]) < 22;
  });
  test.skipIf(oldNode === undefined)('on a Node older than 22 the installed command says how to run it with a newer one', async () => {
    const result = await runInstalled('cloudscale-ccm', ['--help'], {}, oldNode);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^cloudscale-ccm needs Node\.js 22 or newer \(this is v\d+/);
    // Not `npx cloudscale-ccm`, which works only in a checkout that installed the node dev dependency.
    expect(result.stderr).toContain(`npx -y -p node@24 -- node ${join(prefix, 'lib', 'node_modules', manifest.name, 'bin', 'cloudscale-ccm.js')}`);
    expect(result.stderr).not.toContain('npx cloudscale-ccm');
  });

  test.skipIf(oldNode === undefined)('in a checkout, that Node gets advice naming the Node 24 the checkout installed, and the advice works', async () => {
    const result = await runBinary(['--version'], { node: oldNode });
    expect(result.code).toBe(1);
    const advised = /or as (\S+) (\S+) …/.exec(result.stderr);
    expect(advised, result.stderr).not.toBeNull();
    expect(result.stderr).toContain('npx cloudscale-ccm');
    const following = await runBinary(['--version'], { node: advised![1]!, script: advised![2]! });
    expect(following.code, following.stderr).toBe(0);
    expect(following.stdout.trim()).toBe(manifest.version);
  });
});
