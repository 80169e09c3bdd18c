// The bash completion script, loaded into a real bash and asked for completions the way
// readline asks (COMP_WORDS / COMP_CWORD, then the registered function). Service names come
// from `cloudscale-ccm __complete services`; here a shell function of that name stands in for
// the binary and records its arguments.
// The last block runs the real bin/cloudscale-ccm.js (built dist/ needed) against the test cluster.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiException, CoreV1Api, KubeConfig, type V1Service } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  completeCommand,
  completionCommand,
  completionScriptPath,
  serviceCandidates,
  type CompletionShell,
} from '../../src/commands/completion.js';
import type { CommandContext } from '../../src/commands/context.js';
import { connectKube } from '../../src/core/kube/connection.js';
import { testKubeconfig, testNoAccessKubeconfig } from '../support/kube.js';

const bashScript = completionScriptPath('bash');
const scratch = mkdtempSync(join(tmpdir(), 'ccm-completion-'));
const argsLog = join(scratch, 'complete-args.log');

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Runs the completion function for `words` (the last one is the word under the cursor) and
 * returns COMPREPLY. `cloudscale-ccm` inside that bash is a function printing `services`.
 */
function complete(
  words: readonly string[],
  options: {
    services?: readonly string[];
    failLookup?: boolean;
    cwd?: string;
    realBinaryDir?: string;
    /** The bash array the printed script names its installation with. */
    installed?: readonly string[];
  } = {},
): string[] {
  const lookup = options.failLookup
    ? `echo 'error: cannot reach the cluster' >&2; return 1`
    : `printf '%s\\n' ${(options.services ?? []).map(shellQuote).join(' ')}`;
  const fakeBinary = `cloudscale-ccm() { printf '%s\\n' "$*" >> ${shellQuote(argsLog)}; ${lookup}; }`;
  const path = process.env.PATH ?? '/usr/bin:/bin';
  const script = [
    'set -u',
    `source ${shellQuote(bashScript)}`,
    options.realBinaryDir === undefined ? fakeBinary : '',
    options.installed === undefined ? '' : `_cloudscale_ccm_installed=(${options.installed.map(shellQuote).join(' ')})`,
    `COMP_WORDS=(${words.map(shellQuote).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE=${shellQuote(words.join(' '))}`,
    'COMP_POINT=${#COMP_LINE}',
    words[0] === 'npx' ? '_cloudscale_ccm_npx' : '_cloudscale_ccm',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', script], {
    cwd: options.cwd ?? scratch,
    encoding: 'utf8',
    env: { PATH: options.realBinaryDir === undefined ? path : `${options.realBinaryDir}:${path}`, HOME: scratch },
  });
  // Completion must never print into the user's terminal, whatever happens.
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout.split('\n').filter((line) => line !== '');
}

/** The argument lists `cloudscale-ccm` was called with since the last look. */
function recordedCalls(): string[] {
  if (!existsSync(argsLog)) return [];
  const calls = readFileSync(argsLog, 'utf8').split('\n').filter((line) => line !== '');
  rmSync(argsLog);
  return calls;
}

// Which subcommands and flags each script knows is checked against the CLI in completion-sync.test.ts;
// here, how the bash script completes a line.
const SUBCOMMANDS = ['init-nodes', 'sync-lb', 'plan', 'apply', 'cleanup', 'run', 'status', 'sim', 'manifests', 'completion', 'help'];
const GLOBAL_LONG_FLAGS = ['--kubeconfig', '--context', '--output', '--no-color', '--api-url', '--token-file', '--cluster-id', '--verbose', '--help', '--version'];

describe('bash completion', () => {
  test('registers itself for cloudscale-ccm, kubectl-cloudscale and npx', () => {
    const output = execFileSync(
      'bash',
      ['--norc', '--noprofile', '-c', `source ${shellQuote(bashScript)}; complete -p cloudscale-ccm kubectl-cloudscale npx`],
      { encoding: 'utf8' },
    );
    expect(output.trim().split('\n')).toEqual([
      'complete -F _cloudscale_ccm cloudscale-ccm',
      'complete -F _cloudscale_ccm kubectl-cloudscale',
      'complete -F _cloudscale_ccm_npx npx',
    ]);
  });

  test('keeps the completion npx had for lines that are not cloudscale-ccm', () => {
    const script = [
      `_earlier_npx() { COMPREPLY=(earlier); }`,
      'complete -F _earlier_npx npx',
      `source ${shellQuote(bashScript)}`,
      'COMP_WORDS=(npx other ""); COMP_CWORD=2; _cloudscale_ccm_npx npx "" other',
      'printf "%s\\n" "${COMPREPLY[@]}"',
    ].join('\n');
    expect(execFileSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8' })).toBe('earlier\n');
  });

  test.each([
    [['npx', 'cloudscale-ccm', 'pl'], ['plan']],
    [['npx', 'cloudscale-ccm', '-o', 'j'], ['json']],
    [['npx', 'cloudscale-ccm', 'plan', '--de'], ['--detailed-exitcode']],
    [['npx', 'cloud'], []],
  ])('npx: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test.each([
    [['cloudscale-ccm', ''], SUBCOMMANDS],
    [['cloudscale-ccm', 's'], ['sync-lb', 'status', 'sim']],
    [['cloudscale-ccm', 'pl'], ['plan']],
    [['cloudscale-ccm', '-o', 'json', '--context', 'prod', 'c'], ['cleanup', 'completion']],
    [['cloudscale-ccm', 'nope'], []],
  ])('subcommands: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test('global flags before the subcommand', () => {
    expect(complete(['cloudscale-ccm', '--'])).toEqual(GLOBAL_LONG_FLAGS);
  });

  test('flags of the subcommand first, then the global ones', () => {
    expect(complete(['cloudscale-ccm', 'plan', '--'])).toEqual([
      '--namespace',
      '--filename',
      '--detailed-exitcode',
      '--out',
      '--drain-seconds',
      '--max-downtime',
      '--window',
      ...GLOBAL_LONG_FLAGS,
    ]);
  });

  test('short flags of plan', () => {
    expect(complete(['cloudscale-ccm', 'plan', '-']).filter((flag) => !flag.startsWith('--'))).toEqual([
      '-n',
      '-f',
      '-o',
      '-v',
      '-h',
    ]);
  });

  test.each([
    // markdown is for plan only, which may still follow.
    [['cloudscale-ccm', '-o', ''], ['text', 'json', 'yaml', 'markdown']],
    [['cloudscale-ccm', 'plan', '--output', ''], ['text', 'json', 'yaml', 'markdown']],
    [['cloudscale-ccm', 'run', '-o', ''], ['text', 'json', 'yaml']],
    [['cloudscale-ccm', 'sync-lb', '--output', 'm'], []],
    [['cloudscale-ccm', 'plan', '--output', 'y'], ['yaml']],
    // bash splits `--output=j` at the "=" into three words.
    [['cloudscale-ccm', '--output', '=', 'j'], ['json']],
    [['cloudscale-ccm', 'apply', '--output', '='], ['text', 'json', 'yaml']],
  ])('-o values: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test.each([
    [['cloudscale-ccm', 'completion', ''], ['bash', 'zsh', 'fish']],
    [['cloudscale-ccm', 'completion', 'z'], ['zsh']],
    [['cloudscale-ccm', 'completion', 'bash', ''], []],
    [['cloudscale-ccm', 'help', 'sy'], ['sync-lb']],
    [['cloudscale-ccm', 'manifests', '--admission-policy', ''], ['deny', 'warn', 'none']],
    [['cloudscale-ccm', 'manifests', '--admission-policy', 'w'], ['warn']],
  ])('arguments: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test('files after --kubeconfig, --token-file, --seed, -f, --out and --metrics-file', () => {
    const dir = join(scratch, 'files');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'admin.conf'), '');
    writeFileSync(join(dir, 'admin.token'), '');
    const commandOf: Record<string, string[]> = { '--seed': ['sim'], '-f': ['plan'], '--out': ['plan'], '--metrics-file': ['run'] };
    for (const flag of ['--kubeconfig', '--token-file', '--seed', '-f', '--out', '--metrics-file']) {
      expect(complete(['cloudscale-ccm', ...(commandOf[flag] ?? []), flag, 'files/admin.'], { cwd: scratch }).sort()).toEqual([
        'files/admin.conf',
        'files/admin.token',
      ]);
    }
  });

  test('apply: the JSON files plan --out writes, and directories, once', () => {
    const dir = join(scratch, 'saved');
    mkdirSync(join(dir, 'older'), { recursive: true });
    writeFileSync(join(dir, 'web.plan.json'), '{}');
    writeFileSync(join(dir, 'web.plan.md'), '');
    expect(complete(['cloudscale-ccm', 'apply', 'saved/'], { cwd: scratch }).sort()).toEqual(['saved/older', 'saved/web.plan.json']);
    expect(complete(['cloudscale-ccm', 'apply', '--lease-seconds', '30', 'saved/'], { cwd: scratch }).sort()).toEqual([
      'saved/older',
      'saved/web.plan.json',
    ]);
    expect(complete(['cloudscale-ccm', 'apply', 'saved/web.plan.json', 'saved/'], { cwd: scratch })).toEqual([]);
  });

  test('a flag value is not taken for the subcommand', () => {
    expect(complete(['cloudscale-ccm', '--context', 'plan', '--'])).toEqual(GLOBAL_LONG_FLAGS);
  });

  describe('Service names for plan and sync-lb', () => {
    const services = ['service/hello', 'service/web', 'service/world'];

    test.each([
      [['cloudscale-ccm', 'plan', ''], services, '__complete services'],
      [['cloudscale-ccm', 'sync-lb', 'service/w'], ['service/web', 'service/world'], '__complete services'],
      [['cloudscale-ccm', 'plan', '-n', 'shop', 'service/h'], ['service/hello'], '__complete services -n shop'],
      [
        ['cloudscale-ccm', '--kubeconfig', '/k/admin.conf', 'sync-lb', '--namespace', '=', 'shop', '--context', '=', 'prod', ''],
        services,
        '__complete services -n shop --kubeconfig /k/admin.conf --context prod',
      ],
      [
        ['cloudscale-ccm', '--context=prod', 'plan', '--namespace=shop', 'service/hello', ''],
        services,
        '__complete services -n shop --context prod',
      ],
    ])('%j', (words, expected, call) => {
      expect(complete(words, { services })).toEqual(expected);
      expect(recordedCalls()).toEqual([call]);
    });

    test('namespaces after -n, from the cluster on the line', () => {
      const namespaces = ['default', 'shop', 'staging'];
      expect(complete(['cloudscale-ccm', '--kubeconfig', '/k/admin.conf', 'plan', '-n', 's'], { services: namespaces })).toEqual([
        'shop',
        'staging',
      ]);
      expect(complete(['cloudscale-ccm', 'sync-lb', '--namespace', '=', ''], { services: namespaces })).toEqual(namespaces);
      expect(recordedCalls()).toEqual(['__complete namespaces --kubeconfig /k/admin.conf', '__complete namespaces']);
    });

    test('other subcommands do not ask the cluster', () => {
      expect(complete(['cloudscale-ccm', 'cleanup', ''], { services })).toEqual([]);
      expect(complete(['cloudscale-ccm', 'init-nodes', ''], { services })).toEqual([]);
      expect(recordedCalls()).toEqual([]);
    });

    test('npx outside a project asks the installation that printed the script', () => {
      expect(complete(['npx', 'cloudscale-ccm', 'plan', '-n', 'shop', ''], { services, installed: ['cloudscale-ccm'] })).toEqual(services);
      expect(recordedCalls()).toEqual(['__complete services -n shop']);
      // The shipped file names no installation: nothing to ask, nothing printed.
      expect(complete(['npx', 'cloudscale-ccm', 'plan', ''], { services })).toEqual([]);
      expect(recordedCalls()).toEqual([]);
    });

    test('npx inside a project asks the package of the directory tree, with its node_modules/.bin first on PATH', () => {
      const project = join(scratch, 'project');
      const packageBin = join(project, 'node_modules', 'cloudscale-ccm', 'bin');
      mkdirSync(packageBin, { recursive: true });
      mkdirSync(join(project, 'src', 'deep'), { recursive: true });
      writeFileSync(
        join(packageBin, 'cloudscale-ccm.js'),
        `require('node:fs').appendFileSync(${JSON.stringify(argsLog)}, process.argv.slice(2).join(' ') + ' PATH=' + process.env.PATH.split(':')[0] + '\\n');\n` +
          `console.log('service/from-tree');\n`,
      );
      const words = ['npx', 'cloudscale-ccm', '--context', 'prod', 'plan', 'service/f'];
      expect(complete(words, { services, installed: ['cloudscale-ccm'], cwd: join(project, 'src', 'deep') })).toEqual([
        'service/from-tree',
      ]);
      expect(recordedCalls()).toEqual([`__complete services --context prod PATH=${join(project, 'node_modules', '.bin')}`]);
    });

    test('no names and no error text when the lookup fails', () => {
      expect(complete(['cloudscale-ccm', 'plan', ''], { failLookup: true })).toEqual([]);
      expect(recordedCalls()).toHaveLength(1);
    });
  });
});

/** The shipped script's empty installation line, and how `shell` prints the value it sets. */
const INSTALLED: Record<CompletionShell, { line: RegExp; print: string }> = {
  bash: { line: /^_cloudscale_ccm_installed=\(.*\)$/m, print: `printf '%s\\n' "\${_cloudscale_ccm_installed[@]}"` },
  zsh: { line: /^_cloudscale_ccm_installed=\(.*\)$/m, print: `printf '%s\\n' "\${_cloudscale_ccm_installed[@]}"` },
  fish: { line: /^set -g __cloudscale_ccm_installed.*$/m, print: `printf '%s\\n' $__cloudscale_ccm_installed` },
};

/** The script as printed: the shipped file with its installation line naming `words`. */
function expectPrintedScript(shell: CompletionShell, printed: string, words: readonly string[]): void {
  const shipped = readFileSync(completionScriptPath(shell), 'utf8');
  const [emptyLine] = shipped.match(INSTALLED[shell].line) ?? [];
  const [filledLine] = printed.match(INSTALLED[shell].line) ?? [];
  expect(emptyLine).toMatch(/(\(\)|installed)$/);
  expect(printed).toBe(shipped.replace(emptyLine as string, filledLine as string));
  const values = execFileSync(shell, ['-c', `${filledLine}\n${INSTALLED[shell].print}`], { encoding: 'utf8' });
  expect(values.split('\n').slice(0, -1)).toEqual(words);
}

const installedBinary = fileURLToPath(new URL('../../bin/cloudscale-ccm.js', import.meta.url));

describe('completion command', () => {
  test.each(['bash', 'zsh', 'fish'] as CompletionShell[])('prints completions/cloudscale-ccm.%s naming this Node and bin/', async (shell) => {
    let written = '';
    const ctx = { stdout: { write: (text: string) => (written += text) } } as unknown as CommandContext;
    await completionCommand(shell, ctx);
    expectPrintedScript(shell, written, [process.execPath, installedBinary]);
  });
});

describe('Service candidates', () => {
  const service = (name: string, type: string, finalizers?: string[]): V1Service => ({
    metadata: { name, ...(finalizers === undefined ? {} : { finalizers }) },
    spec: { type },
  });

  test.each([
    [[], []],
    [[service('web', 'LoadBalancer'), service('api', 'LoadBalancer')], ['service/api', 'service/web']],
    [[service('internal', 'ClusterIP'), service('ports', 'NodePort')], []],
    [[service('was-lb', 'ClusterIP', ['service.kubernetes.io/load-balancer-cleanup'])], ['service/was-lb']],
    [[service('other', 'ClusterIP', ['example.com/keep'])], []],
  ] as [V1Service[], string[]][])('%#', (services, expected) => {
    expect(serviceCandidates(services)).toEqual(expected);
  });
});

describe('__complete services against the test cluster', () => {
  // Unique names in `default`; a foreign loadBalancerClass keeps other tests' sync-lb passes away.
  const suffix = randomUUID().slice(0, 8);
  const lbName = `completion-lb-${suffix}`;
  const clusterIpName = `completion-internal-${suffix}`;

  test('prints the LoadBalancer Services of the namespace, one per line', async () => {
    const kubeconfig = testKubeconfig();
    const admin = new KubeConfig();
    admin.loadFromFile(kubeconfig);
    const core = admin.makeApiClient(CoreV1Api);
    const ports = [{ port: 80, protocol: 'TCP' }];
    await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: lbName }, spec: { type: 'LoadBalancer', loadBalancerClass: 'example.com/not-cloudscale', ports } },
    });
    try {
      await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: clusterIpName }, spec: { ports } } });
      let written = '';
      const ctx = {
        stdout: { write: (text: string) => (written += text) },
        kube: () => connectKube({ kubeconfig }),
      } as unknown as CommandContext;
      await completeCommand('services', { namespace: 'default' }, ctx);
      const lines = written.split('\n');
      expect(lines.at(-1)).toBe('');
      expect(lines).toContain(`service/${lbName}`);
      expect(lines).not.toContain(`service/${clusterIpName}`);
      expect(lines.filter((line) => line !== '').every((line) => /^service\/[a-z0-9-]+$/.test(line))).toBe(true);
    } finally {
      for (const name of [lbName, clusterIpName]) {
        await core.deleteNamespacedService({ namespace: 'default', name }).catch((error: unknown) => {
          if (!(error instanceof ApiException && error.code === 404)) throw error;
        });
      }
    }
  });
});

describe('the real binary', () => {
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  const binaryDir = join(scratch, 'path');
  const wrapper = join(binaryDir, 'cloudscale-ccm');

  beforeAll(() => {
    if (!existsSync(join(repo, 'dist', 'cli.js'))) {
      throw new Error('dist/cli.js is missing: run `npm run build` before the CLI tests');
    }
    // `cloudscale-ccm` on PATH, as after `npm install -g`, running this checkout on this Node.
    mkdirSync(binaryDir, { recursive: true });
    writeFileSync(
      wrapper,
      `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(join(repo, 'bin', 'cloudscale-ccm.js'))} "$@"\n`,
      { mode: 0o755 },
    );
  });

  test.each(['bash', 'zsh', 'fish'] as CompletionShell[])('completion %s prints the shipped script naming itself', (shell) => {
    expectPrintedScript(shell, execFileSync(wrapper, ['completion', shell], { encoding: 'utf8' }), [process.execPath, installedBinary]);
  });

  test('plan completes LoadBalancer Service names read from the cluster', async () => {
    const kubeconfig = testKubeconfig();
    const admin = new KubeConfig();
    admin.loadFromFile(kubeconfig);
    const core = admin.makeApiClient(CoreV1Api);
    const name = `completion-binary-${randomUUID().slice(0, 8)}`;
    await core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: { type: 'LoadBalancer', loadBalancerClass: 'example.com/not-cloudscale', ports: [{ port: 80, protocol: 'TCP' }] },
      },
    });
    try {
      const words = ['cloudscale-ccm', '--kubeconfig', kubeconfig, 'plan', '-n', 'default', `service/${name.slice(0, -3)}`];
      expect(complete(words, { realBinaryDir: binaryDir })).toEqual([`service/${name}`]);
    } finally {
      await core.deleteNamespacedService({ namespace: 'default', name });
    }
  });
});

describe('__complete services without the Kubernetes client', () => {
  const repo = fileURLToPath(new URL('../..', import.meta.url));
  const binary = join(repo, 'bin', 'cloudscale-ccm.js');
  // Loaded before the binary: says on stderr when anything of @kubernetes/client-node (the
  // package or dist/vendor/client-node.js) is loaded.
  const hook = join(scratch, 'report-client-node.mjs');
  const name = `completion-direct-${randomUUID().slice(0, 8)}`;
  let core: CoreV1Api;

  beforeAll(async () => {
    writeFileSync(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        'let reported = false;',
        'registerHooks({',
        '  resolve(specifier, context, next) {',
        '    const result = next(specifier, context);',
        "    if (!reported && result.url.includes('client-node')) { reported = true; process.stderr.write('client-node loaded\\n'); }",
        '    return result;',
        '  },',
        '});',
      ].join('\n'),
    );
    const admin = new KubeConfig();
    admin.loadFromFile(testKubeconfig());
    core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: { type: 'LoadBalancer', loadBalancerClass: 'example.com/not-cloudscale', ports: [{ port: 80, protocol: 'TCP' }] },
      },
    });
  });
  afterAll(async () => {
    await core.deleteNamespacedService({ namespace: 'default', name });
  });

  const lookup = (env: Record<string, string>, args: readonly string[] = []) =>
    spawnSync(process.execPath, ['--import', hook, binary, '__complete', 'services', '-n', 'default', ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch, ...env },
    });

  test('a kubeconfig with a client certificate: one GET, the client never loads', () => {
    const result = lookup({ KUBECONFIG: testKubeconfig() });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n')).toContain(`service/${name}`);
  });

  test('namespaces: one GET, the client never loads', () => {
    const result = spawnSync(process.execPath, ['--import', hook, binary, '__complete', 'namespaces'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch, KUBECONFIG: testKubeconfig() },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual(expect.arrayContaining(['default', 'kube-system']));
  });

  test('--kubeconfig and --context name them, as for the other commands', () => {
    const context = execFileSync('kubectl', ['config', 'current-context', '--kubeconfig', testKubeconfig()], { encoding: 'utf8' }).trim();
    const result = lookup({ KUBECONFIG: '/nonexistent' }, ['--kubeconfig', testKubeconfig(), '--context', context]);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toContain(`service/${name}`);
    const unknown = lookup({}, ['--kubeconfig', testKubeconfig(), '--context', 'no-such-context']);
    expect(unknown.stdout).toBe('');
    expect(unknown.status).toBe(1);
  });

  test('what only the full client reads (here: two files in KUBECONFIG) falls back to it', () => {
    const second = join(scratch, 'second.conf');
    writeFileSync(second, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    const result = lookup({ KUBECONFIG: `${testKubeconfig()}:${second}` });
    expect(result.stderr).toBe('client-node loaded\n');
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n')).toContain(`service/${name}`);
  });

  test('an API error: nothing on stdout, the error on stderr, exit 1', () => {
    const noAccess = testNoAccessKubeconfig();
    if (noAccess === undefined) return;
    const result = lookup({ KUBECONFIG: noAccess });
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('error: GET /api/v1/namespaces/default/services answered 403\n');
    expect(result.status).toBe(1);
  });

  test('a server that is not there: nothing on stdout, exit 1', () => {
    const unreachable = join(scratch, 'unreachable.conf');
    writeFileSync(unreachable, readFileSync(testKubeconfig(), 'utf8').replace(/server: .*/, 'server: https://127.0.0.1:1'));
    const result = lookup({ KUBECONFIG: unreachable });
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: .*ECONNREFUSED/);
    expect(result.status).toBe(1);
  });
});

describe('kubectl_complete-cloudscale', () => {
  const completer = fileURLToPath(new URL('../../bin/kubectl_complete-cloudscale', import.meta.url));
  const answer = (...args: string[]) =>
    execFileSync(completer, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch } });

  test.each([
    [['pl'], 'plan\n:4\n'],
    [['-o', ''], 'text\njson\nyaml\nmarkdown\n:4\n'],
    [['plan', '--out', ''], ':0\n'],
    [['plan', '--detailed'], '--detailed-exitcode\n:4\n'],
    [['cleanup', ''], ':4\n'],
    // A flag that takes a file: kubectl's script completes file names itself.
    [['--kubeconfig', ''], ':0\n'],
    [['plan', '-f', 'serv'], ':0\n'],
  ])('%j', (args, expected) => {
    expect(answer(...args)).toBe(expected);
  });
});
