// Completion as a person gets it: bash, zsh and fish run interactively under a pseudo-terminal
// (`script`), a line is typed with a Tab, and the shell echoes what the line became. The
// executables are on PATH under the names `npm install -g` gives them (package.json "bin"), and
// Service names come from the test cluster through the real binary (built dist/ needed).
// zsh, fish and bash-completion (which kubectl's bash script needs) come from Debian
// (test/run-tests.sh step 2).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLoadBalancerService, deleteCreatedObjects, ensureNamespace, testKubeconfig, uniqueName } from '../support/kube.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ccm-completion-shells-'));
const installedBin = join(scratch, 'bin');
const BASH_COMPLETION = '/usr/share/bash-completion/bash_completion';

const namespace = uniqueName('complete');
const serviceName = `completion-tab-${namespace.slice(-6)}`;
/** A prefix only this Service has, so one Tab completes it in every shell. */
const typedService = `service/${serviceName.slice(0, -2)}`;
const service = `service/${serviceName}`;
/** The namespace's name but its last two characters: only it starts so. */
const typedNamespace = namespace.slice(0, -2);

beforeAll(async () => {
  if (!existsSync(join(repo, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  mkdirSync(installedBin);
  const bins = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).bin as Record<string, string>;
  for (const [name, path] of Object.entries(bins)) symlinkSync(join(repo, path), join(installedBin, name));
  await ensureNamespace(namespace);
  // A foreign loadBalancerClass keeps other tests' sync-lb passes away from it.
  await createLoadBalancerService(namespace, serviceName, { loadBalancerClass: 'example.com/not-cloudscale' });
});
afterAll(async () => {
  await deleteCreatedObjects();
  rmSync(scratch, { recursive: true, force: true });
});

type Shell = 'bash' | 'zsh' | 'fish';

const SHELL_COMMAND: Record<Shell, string> = {
  bash: 'bash --norc --noprofile -i',
  zsh: 'zsh -f -i',
  fish: 'fish --no-config -i',
};

/**
 * Starts `shell` in a pseudo-terminal in `cwd`, runs `setup`, then for each line types it and a
 * Tab, goes to the start of the line (Ctrl-A) and turns it into `echo Xn …`: the shell prints
 * the completed line. Resolves to those lines, in order, and what the terminal showed.
 */
async function completedLines(
  shell: Shell,
  options: { setup: string; lines: readonly string[]; cwd: string; path: string },
): Promise<{ lines: string[]; transcript: string }> {
  const child = spawn('script', ['-qec', SHELL_COMMAND[shell], '/dev/null'], {
    cwd: options.cwd,
    env: { PATH: options.path, HOME: scratch, TERM: 'dumb', PS1: '$ ', KUBECONFIG: testKubeconfig() },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const waiter of waiters.splice(0)) waiter();
  });
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output.match(pattern);
        if (match !== null) resolve(match);
        else if (child.exitCode !== null) reject(new Error(`${shell} ended; it printed:\n${output}`));
        else waiters.push(check);
      };
      check();
    });
  try {
    // `READ""Y` prints READY; the echo of the typed line does not contain it.
    child.stdin.write(`${options.setup}; echo READ""Y\n`);
    await waitFor(/READY/);
    const completed: string[] = [];
    for (const [index, line] of options.lines.entries()) {
      child.stdin.write(`${line}\t\x01echo X${index} \n`);
      const match = await waitFor(new RegExp(`\\nX${index} ([^\\r\\n]*)\\r?\\n`));
      completed.push((match[1] as string).trimEnd());
    }
    return { lines: completed, transcript: output };
  } finally {
    child.stdin.end('exit\n');
    await closed;
  }
}

const nodeDir = dirname(process.execPath);
const systemPath = process.env.PATH ?? '/usr/bin:/bin';
/** As after `npm install -g cloudscale-ccm`: its executables and a Node that runs them. */
const installedPath = () => `${installedBin}:${nodeDir}:${systemPath}`;

const SOURCE_PRINTED: Record<Shell, string> = {
  bash: 'source <(cloudscale-ccm completion bash)',
  zsh: 'PS1="$ "; autoload -U compinit; compinit -u; source <(cloudscale-ccm completion zsh)',
  fish: 'cloudscale-ccm completion fish | source',
};
const SOURCE_SHIPPED: Record<Shell, string> = {
  bash: `source ${join(repo, 'completions/cloudscale-ccm.bash')}`,
  zsh: `PS1="$ "; autoload -U compinit; compinit -u; source ${join(repo, 'completions/cloudscale-ccm.zsh')}`,
  fish: `source ${join(repo, 'completions/cloudscale-ccm.fish')}`,
};
const SOURCE_KUBECTL: Record<Shell, string> = {
  bash: `source ${BASH_COMPLETION}; source <(kubectl completion bash)`,
  zsh: 'PS1="$ "; autoload -U compinit; compinit -u; source <(kubectl completion zsh)',
  fish: 'kubectl completion fish | source',
};

describe.each(['bash', 'zsh', 'fish'] as Shell[])('%s', (shell) => {
  test('cloudscale-ccm installed: subcommands, flag values, namespaces, Service names; kubectl-cloudscale too', async () => {
    const { lines, transcript } = await completedLines(shell, {
      setup: SOURCE_PRINTED[shell],
      cwd: scratch,
      path: installedPath(),
      lines: [
        'cloudscale-ccm pl',
        'cloudscale-ccm -o ya',
        `cloudscale-ccm plan -n ${typedNamespace}`,
        `cloudscale-ccm plan -n ${namespace} ${typedService}`,
        `kubectl-cloudscale sync-lb -n ${namespace} ${typedService}`,
      ],
    });
    expect(lines, transcript).toEqual([
      'cloudscale-ccm plan',
      'cloudscale-ccm -o yaml',
      `cloudscale-ccm plan -n ${namespace}`,
      `cloudscale-ccm plan -n ${namespace} ${service}`,
      `kubectl-cloudscale sync-lb -n ${namespace} ${service}`,
    ]);
  });

  test('apply completes the JSON plans plan --out wrote; -o markdown after plan; the flags of status', async () => {
    const plans = join(scratch, `plans-${shell}`);
    mkdirSync(plans);
    writeFileSync(join(plans, 'web.plan.json'), '{}');
    // Not a saved plan: without the *.json filter the line would stop at `web.plan.`.
    writeFileSync(join(plans, 'web.plan.md'), '');
    const { lines, transcript } = await completedLines(shell, {
      setup: SOURCE_PRINTED[shell],
      cwd: scratch,
      path: installedPath(),
      lines: [`cloudscale-ccm apply plans-${shell}/web`, 'cloudscale-ccm plan -o mark', 'cloudscale-ccm status --fail'],
    });
    expect(lines, transcript).toEqual([
      `cloudscale-ccm apply plans-${shell}/web.plan.json`,
      'cloudscale-ccm plan -o markdown',
      'cloudscale-ccm status --fail-if-older-than',
    ]);
  });

  test('npx cloudscale-ccm in a checkout, cloudscale-ccm not on PATH, the shipped script', async () => {
    const { lines, transcript } = await completedLines(shell, {
      setup: SOURCE_SHIPPED[shell],
      // A directory below the checkout: the lookup finds the package by walking up.
      cwd: join(repo, 'docs'),
      path: `${nodeDir}:${systemPath}`,
      lines: ['npx cloudscale-ccm sy', `npx cloudscale-ccm sync-lb --namespace ${namespace} ${typedService}`],
    });
    expect(lines, transcript).toEqual(['npx cloudscale-ccm sync-lb', `npx cloudscale-ccm sync-lb --namespace ${namespace} ${service}`]);
  });

  test('kubectl cloudscale through kubectl’s own completion', async () => {
    const { lines, transcript } = await completedLines(shell, {
      setup: SOURCE_KUBECTL[shell],
      cwd: scratch,
      path: installedPath(),
      lines: ['kubectl cloudscale pl', `kubectl cloudscale -n ${typedNamespace}`, `kubectl cloudscale plan -n ${namespace} ${typedService}`],
    });
    expect(lines, transcript).toEqual([
      'kubectl cloudscale plan',
      `kubectl cloudscale -n ${namespace}`,
      `kubectl cloudscale plan -n ${namespace} ${service}`,
    ]);
  });
});

describe('kubectl cloudscale', () => {
  const kubectl = (args: readonly string[]) =>
    spawnSync('kubectl', ['cloudscale', ...args], {
      cwd: scratch,
      encoding: 'utf8',
      env: { PATH: installedPath(), HOME: scratch, KUBECONFIG: testKubeconfig() },
    });

  test('runs the CLI, with -n also before the subcommand', () => {
    const version = kubectl(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    for (const args of [['-n', namespace, '__complete', 'services'], ['__complete', 'services', '--namespace', namespace]]) {
      const result = kubectl(args);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe(`${service}\n`);
    }
  });

  test('a subcommand without -n refuses it, naming it', () => {
    const result = kubectl(['-n', namespace, 'cleanup']);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown option '-n'");
  });
});
