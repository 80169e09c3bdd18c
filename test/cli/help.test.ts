// `--version`, and `--help` on the program and on every subcommand: exit 0, the text on stdout,
// every flag of the command listed. The table below is the list of commands: a subcommand added
// to src/cli.ts without a row here fails the first test.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { runBinary } from '../support/ccm.js';

const globalFlags = ['--kubeconfig', '--context', '--output', '--no-color', '--api-url', '--token-file', '--cluster-id', '--verbose', '--version'];

const commands: Record<string, { usage: string; flags: readonly string[] }> = {
  'init-nodes': {
    usage: 'init-nodes [options] [node...]',
    flags: ['--dry-run', '--selector', '--max-node-deletions', '--wait', '--lease-seconds', '--metrics-file', '--pushgateway'],
  },
  'sync-lb': {
    usage: 'sync-lb [options] [service...]',
    flags: ['--namespace', '--concurrency', '--wait-timeout', '--settle-seconds', '--poll-seconds', '--dry-run', '--wait', '--lease-seconds', '--metrics-file', '--pushgateway'],
  },
  plan: { usage: 'plan [options] [service...]', flags: ['--namespace', '--filename', '--detailed-exitcode', '--out'] },
  apply: { usage: 'apply [options] <file>', flags: ['--concurrency', '--wait-timeout', '--settle-seconds', '--poll-seconds', '--wait', '--lease-seconds'] },
  cleanup: { usage: 'cleanup [options]', flags: ['--all', '--include-untagged', '--yes', '--dry-run', '--wait', '--lease-seconds', '--metrics-file', '--pushgateway'] },
  run: {
    usage: 'run [options]',
    flags: ['--wait', '--lease-seconds', '--metrics-file', '--pushgateway', '--force', '--concurrency', '--max-node-deletions', '--wait-timeout', '--settle-seconds', '--poll-seconds'],
  },
  status: { usage: 'status [options] [service...]', flags: ['--fail-if-older-than', '--namespace', '--drain-seconds'] },
  sim: { usage: 'sim [options]', flags: ['--seed', '--port', '--lb-provision-seconds', '--token'] },
  manifests: { usage: 'manifests [options]', flags: ['--image', '--schedule', '--api-server-host', '--api-server-port'] },
  completion: { usage: 'completion [options] <shell>', flags: [] },
};

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

describe('--version', () => {
  test('prints the version of package.json and nothing else', async () => {
    const result = await runBinary(['--version']);
    expect(result).toEqual({ code: 0, stdout: `${packageVersion}\n`, stderr: '' });
  });
});

describe('--help', () => {
  test('the program lists every subcommand and every global option', async () => {
    const result = await runBinary(['--help']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^Usage: cloudscale-ccm \[options\] \[command\]\n/);
    const listed = [...result.stdout.slice(result.stdout.indexOf('\nCommands:\n')).matchAll(/^ {2}([a-z][\w-]*)/gm)]
      .map((match) => match[1])
      .filter((name) => name !== 'help');
    expect(listed.sort()).toEqual(Object.keys(commands).sort());
    for (const flag of globalFlags) expect(result.stdout).toContain(flag);
    // The hidden command the completion scripts call stays hidden.
    expect(result.stdout).not.toContain('__complete');
  });

  test('-h and `help` print the same text as --help', async () => {
    const reference = await runBinary(['--help']);
    expect(await runBinary(['-h'])).toEqual(reference);
    expect(await runBinary(['help'])).toEqual(reference);
  });

  test.each(Object.entries(commands))('%s --help lists its arguments and flags', async (name, expected) => {
    const result = await runBinary([name, '--help']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')[0]).toBe(`Usage: cloudscale-ccm ${expected.usage}`);
    for (const flag of [...expected.flags, '--help']) expect(result.stdout).toContain(flag);
    // A subcommand's help also names the global options that apply to it; sim reads none of them.
    for (const flag of globalFlags.filter((f) => f !== '--version')) {
      if (name === 'sim') expect(result.stdout).not.toContain(flag);
      else expect(result.stdout).toContain(flag);
    }

    expect(await runBinary(['help', name])).toEqual(result);
  });

  test('--help wins over a missing required argument and needs no cluster or token', async () => {
    const result = await runBinary(['completion', '--help'], {
      env: { KUBECONFIG: '/nonexistent/kubeconfig', CLOUDSCALE_API_TOKEN: undefined },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('bash, zsh or fish');
  });
});
