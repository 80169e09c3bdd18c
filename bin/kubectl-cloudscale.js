#!/usr/bin/env node
// `kubectl cloudscale …`: kubectl runs this executable (kubectl-NAME on PATH, krew's convention)
// with the words after the plugin name. It is cloudscale-ccm, with -n/--namespace also accepted
// before the subcommand as kubectl users write it (src/commands/kubectl-plugin.ts).
const { kubectlPluginArgs } = await import('../dist/commands/kubectl-plugin.js');
process.argv.splice(2, Infinity, ...kubectlPluginArgs(process.argv.slice(2)));
await import('./cloudscale-ccm.js');
