// `kubectl cloudscale …` runs bin/kubectl-cloudscale.js with the words after `kubectl cloudscale`
// (kubectl's plugin convention; kubectl passes its own flags through only when they follow the
// plugin name). The plugin is the same CLI; only the kubectl habit of giving -n/--namespace
// before the subcommand needs help, because for cloudscale-ccm it is an option of the
// subcommands that take Services (plan, sync-lb, status service/NAME).

/** The global options of src/cli.ts that take a value: their value is not the subcommand. */
const GLOBAL_VALUE_OPTIONS = new Set(['--kubeconfig', '--context', '-o', '--output', '--api-url', '--token-file', '--cluster-id']);

/**
 * The arguments with every -n/--namespace given before the subcommand moved right behind it;
 * anything else, and a line without a subcommand, unchanged. A subcommand without -n then
 * reports it as an unknown option, as cloudscale-ccm does.
 */
export function kubectlPluginArgs(args: readonly string[]): string[] {
  const before: string[] = [];
  const namespace: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === '--') break;
    if (arg === '-n' || arg === '--namespace') {
      namespace.push(arg, ...args.slice(i + 1, i + 2));
      i += 1;
    } else if (arg.startsWith('--namespace=') || (arg.startsWith('-n') && !arg.startsWith('--'))) {
      namespace.push(arg);
    } else if (GLOBAL_VALUE_OPTIONS.has(arg)) {
      before.push(arg, ...args.slice(i + 1, i + 2));
      i += 1;
    } else if (arg.startsWith('-')) {
      before.push(arg);
    } else {
      return [...before, arg, ...namespace, ...args.slice(i + 1)];
    }
  }
  return [...args];
}
