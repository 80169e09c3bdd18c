// `kubectl cloudscale …` accepts -n/--namespace before the subcommand, as kubectl users write it.
import { describe, expect, test } from 'vitest';
import { kubectlPluginArgs } from '../../src/commands/kubectl-plugin.js';

describe('kubectlPluginArgs', () => {
  test.each([
    [['plan', '-n', 'shop', 'service/web'], ['plan', '-n', 'shop', 'service/web']],
    [['-n', 'shop', 'plan', 'service/web'], ['plan', '-n', 'shop', 'service/web']],
    [['-n', 'shop', 'status', 'service/web'], ['status', '-n', 'shop', 'service/web']],
    [['--namespace', 'shop', 'sync-lb'], ['sync-lb', '--namespace', 'shop']],
    [['--namespace=shop', 'plan'], ['plan', '--namespace=shop']],
    [['-nshop', 'plan'], ['plan', '-nshop']],
    // Global options and their values stay before the subcommand; a value is not the subcommand.
    [['--context', 'prod', '-n', 'shop', '-o', 'json', 'plan', 'web'], ['--context', 'prod', '-o', 'json', 'plan', '-n', 'shop', 'web']],
    [['--kubeconfig', '/k', '-v', '-n', 'shop', 'plan'], ['--kubeconfig', '/k', '-v', 'plan', '-n', 'shop']],
    // No subcommand, or -n after `--`: unchanged, for the CLI to report.
    [['-n', 'shop'], ['-n', 'shop']],
    [['--', '-n', 'shop', 'plan'], ['--', '-n', 'shop', 'plan']],
    [[], []],
  ])('%j', (args, expected) => {
    expect(kubectlPluginArgs(args)).toEqual(expected);
  });
});
