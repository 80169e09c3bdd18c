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
import { testKubeconfig } from '../support/kube.js';

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
  options: { services?: readonly string[]; failLookup?: boolean; cwd?: string; realBinaryDir?: string } = {},
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
    `COMP_WORDS=(${words.map(shellQuote).join(' ')})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE=${shellQuote(words.join(' '))}`,
    'COMP_POINT=${#COMP_LINE}',
    '_cloudscale_ccm',
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

const SUBCOMMANDS = ['init-nodes', 'sync-lb', 'plan', 'cleanup', 'run', 'sim', 'manifests', 'completion', 'help'];
const GLOBAL_LONG_FLAGS = ['--kubeconfig', '--context', '--output', '--no-color', '--api-url', '--token-file', '--cluster-id', '--verbose', '--help', '--version'];

describe('bash completion', () => {
  test('registers itself for cloudscale-ccm', () => {
    const output = execFileSync('bash', ['--norc', '--noprofile', '-c', `source ${shellQuote(bashScript)}; complete -p cloudscale-ccm`], {
      encoding: 'utf8',
    });
    expect(output.trim()).toBe('complete -F _cloudscale_ccm cloudscale-ccm');
  });

  test.each([
    [['cloudscale-ccm', ''], SUBCOMMANDS],
    [['cloudscale-ccm', 's'], ['sync-lb', 'sim']],
    [['cloudscale-ccm', 'pl'], ['plan']],
    [['cloudscale-ccm', '-o', 'json', '--context', 'prod', 'c'], ['cleanup', 'completion']],
    [['cloudscale-ccm', 'nope'], []],
  ])('subcommands: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test('global flags before the subcommand', () => {
    expect(complete(['cloudscale-ccm', '--'])).toEqual(GLOBAL_LONG_FLAGS);
  });

  test.each([
    ['plan', ['--namespace', '--filename', '--detailed-exitcode']],
    ['sync-lb', ['--namespace', '--concurrency', '--wait-timeout', '--dry-run', '--wait', '--lease-seconds']],
    ['init-nodes', ['--dry-run', '--max-node-deletions', '--wait', '--lease-seconds']],
    ['cleanup', ['--all', '--yes', '--dry-run', '--wait', '--lease-seconds']],
    ['run', ['--wait', '--lease-seconds', '--force', '--concurrency', '--max-node-deletions', '--wait-timeout']],
    ['sim', ['--seed', '--port', '--lb-provision-seconds', '--token', '--latency-ms', '--pool-delete-keeps-listeners']],
    ['manifests', ['--image', '--schedule', '--api-server-host', '--api-server-port']],
  ])('flags of %s, then the global ones', (command, flags) => {
    expect(complete(['cloudscale-ccm', command, '--'])).toEqual([...flags, ...GLOBAL_LONG_FLAGS]);
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
    [['cloudscale-ccm', '-o', ''], ['text', 'json', 'yaml']],
    [['cloudscale-ccm', 'plan', '--output', 'y'], ['yaml']],
    // bash splits `--output=j` at the "=" into three words.
    [['cloudscale-ccm', '--output', '=', 'j'], ['json']],
    [['cloudscale-ccm', '--output', '='], ['text', 'json', 'yaml']],
  ])('-o values: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test.each([
    [['cloudscale-ccm', 'completion', ''], ['bash', 'zsh', 'fish']],
    [['cloudscale-ccm', 'completion', 'z'], ['zsh']],
    [['cloudscale-ccm', 'completion', 'bash', ''], []],
    [['cloudscale-ccm', 'help', 'sy'], ['sync-lb']],
  ])('arguments: %j', (words, expected) => {
    expect(complete(words)).toEqual(expected);
  });

  test('files after --kubeconfig, --token-file, --seed and -f', () => {
    const dir = join(scratch, 'files');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'admin.conf'), '');
    writeFileSync(join(dir, 'admin.token'), '');
    for (const flag of ['--kubeconfig', '--token-file', '--seed', '-f']) {
      const command = flag === '-f' ? ['plan'] : flag === '--seed' ? ['sim'] : [];
      expect(complete(['cloudscale-ccm', ...command, flag, 'files/admin.'], { cwd: scratch }).sort()).toEqual([
        'files/admin.conf',
        'files/admin.token',
      ]);
    }
  });

  test('a flag value is not taken for the subcommand', () => {
    expect(complete(['cloudscale-ccm', '--context', 'plan', '--'])).toEqual(GLOBAL_LONG_FLAGS);
  });

  describe('Service names for plan and sync-lb', () => {
    const services = ['service/hello', 'service/web', 'service/world'];

    test.each([
      [['cloudscale-ccm', 'plan', ''], services, '__complete services -n default'],
      [['cloudscale-ccm', 'sync-lb', 'service/w'], ['service/web', 'service/world'], '__complete services -n default'],
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

    test('other subcommands do not ask the cluster', () => {
      expect(complete(['cloudscale-ccm', 'cleanup', ''], { services })).toEqual([]);
      expect(complete(['cloudscale-ccm', 'init-nodes', ''], { services })).toEqual([]);
      expect(recordedCalls()).toEqual([]);
    });

    test('no names and no error text when the lookup fails', () => {
      expect(complete(['cloudscale-ccm', 'plan', ''], { failLookup: true })).toEqual([]);
      expect(recordedCalls()).toHaveLength(1);
    });
  });
});

describe('zsh and fish scripts offer the same flags as the bash script', () => {
  const flagsOf = (command: string) =>
    execFileSync('bash', ['--norc', '--noprofile', '-c', `source ${shellQuote(bashScript)}; _cloudscale_ccm_command_flags ${command}`], {
      encoding: 'utf8',
    })
      .trim()
      .split(' ')
      .filter((flag) => flag.startsWith('--'));
  const zsh = readFileSync(completionScriptPath('zsh'), 'utf8');
  const fish = readFileSync(completionScriptPath('fish'), 'utf8');

  test.each(SUBCOMMANDS.filter((c) => c !== 'help' && c !== 'completion'))('%s', (command) => {
    const zshSection = zsh.slice(zsh.indexOf(`    ${command})\n`));
    const zshCommand = zshSection.slice(0, zshSection.indexOf(';;'));
    const namespaceOpt = zshCommand.includes('$namespace_opt') ? ['--namespace'] : [];
    const zshFlags = [...zshCommand.matchAll(/'(--[a-z-]+)[=[]/g), ...zshCommand.matchAll(/,(--[a-z-]+)=?\}/g)].map((m) => m[1]);
    expect(new Set([...namespaceOpt, ...zshFlags])).toEqual(new Set(flagsOf(command)));

    const fishFlags = [...fish.matchAll(/^complete -c cloudscale-ccm -n '__fish_seen_subcommand_from ([a-z -]+)'.* -l ([a-z-]+)/gm)]
      .filter((m) => (m[1] as string).split(' ').includes(command))
      .map((m) => `--${m[2]}`);
    expect(new Set(fishFlags)).toEqual(new Set(flagsOf(command)));
  });
});

describe('completion command', () => {
  test.each(['bash', 'zsh', 'fish'] as CompletionShell[])('prints completions/cloudscale-ccm.%s unchanged', async (shell) => {
    let written = '';
    const ctx = { stdout: { write: (text: string) => (written += text) } } as unknown as CommandContext;
    await completionCommand(shell, ctx);
    expect(written).toBe(readFileSync(completionScriptPath(shell), 'utf8'));
    expect(written.length).toBeGreaterThan(500);
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

  test.each(['bash', 'zsh', 'fish'] as CompletionShell[])('completion %s prints the shipped script', (shell) => {
    expect(execFileSync(wrapper, ['completion', shell], { encoding: 'utf8' })).toBe(
      readFileSync(completionScriptPath(shell), 'utf8'),
    );
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
