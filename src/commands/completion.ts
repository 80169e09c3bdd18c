// `cloudscale-ccm completion bash|zsh|fish` prints the script shipped under completions/ with
// one line filled in: the installation that printed it. The scripts call the hidden
// `cloudscale-ccm __complete services|namespaces` for names from the cluster: bin/ first offers
// it to completeWithoutClient (one GET with the kubeconfig's credentials), and only when that
// cannot serve the kubeconfig does the full CLI run completeCommand with the Kubernetes client.
import type { V1Namespace, V1Service } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { assertNever } from '../core/errors.js';
import { directCredentials, directGetJson } from '../core/kube/direct-get.js';
import type { CommandContext } from './context.js';

export type CompletionShell = 'bash' | 'zsh' | 'fish';
export const COMPLETION_KINDS = ['services', 'namespaces'] as const;
export type CompletionKind = (typeof COMPLETION_KINDS)[number];

/** The finalizer the service controller keeps while a load balancer may still exist. */
const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

/** Works from src/ (tests) and dist/ (the package): both sit one level below the root. */
export function completionScriptPath(shell: CompletionShell): string {
  return fileURLToPath(new URL(`../../completions/cloudscale-ccm.${shell}`, import.meta.url));
}

/** The line of each script that names the installation printing it; empty in the shipped file. */
const INSTALLED_LINE: Record<CompletionShell, { empty: string; filled: (words: string[]) => string }> = {
  bash: { empty: '_cloudscale_ccm_installed=()', filled: (words) => `_cloudscale_ccm_installed=(${words.map(posixQuote).join(' ')})` },
  zsh: { empty: '_cloudscale_ccm_installed=()', filled: (words) => `_cloudscale_ccm_installed=(${words.map(posixQuote).join(' ')})` },
  fish: { empty: 'set -g __cloudscale_ccm_installed', filled: (words) => `set -g __cloudscale_ccm_installed ${words.map(fishQuote).join(' ')}` },
};

/**
 * Prints the shipped script with this installation (this Node, this package's bin) filled in,
 * so that `npx cloudscale-ccm` outside a project, which no directory tree tells where the
 * package is, still completes Service names.
 */
export async function completionCommand(shell: CompletionShell, ctx: CommandContext): Promise<void> {
  // Loaded here, not at the top: node:fs/promises brings streams and readline (about 17 ms of CPU)
  // that a Tab, which also loads this module, does not need.
  const { readFile } = await import('node:fs/promises');
  const script = await readFile(completionScriptPath(shell), 'utf8');
  const line = INSTALLED_LINE[shell];
  const bin = fileURLToPath(new URL('../../bin/cloudscale-ccm.js', import.meta.url));
  ctx.stdout.write(script.replace(`\n${line.empty}\n`, `\n${line.filled([process.execPath, bin])}\n`));
}

function posixQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function fishQuote(word: string): string {
  return `'${word.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** Candidates for the shell scripts, one per line; nothing else is written to stdout. */
export async function completeCommand(
  kind: CompletionKind,
  options: { namespace?: string },
  ctx: CommandContext,
): Promise<void> {
  let candidates: string[];
  switch (kind) {
    case 'services':
      candidates = await completeServiceNames(options.namespace ?? ctx.kube().namespace, ctx);
      break;
    case 'namespaces':
      candidates = await completeNamespaceNames(ctx);
      break;
    default:
      assertNever(kind, 'completion kind');
  }
  ctx.stdout.write(candidateLines(candidates));
}

function candidateLines(candidates: readonly string[]): string {
  return candidates.map((candidate) => `${candidate}\n`).join('');
}

/** A Tab gives up on a cluster that does not answer within this time. */
const DIRECT_TIMEOUT_MS = 3000;

/**
 * Serves `__complete services|namespaces [-n NS] [--kubeconfig FILE] [--context NAME]` (the
 * arguments after `__complete`) without loading the Kubernetes client, and resolves to true;
 * resolves to false, having written nothing, when the arguments or the kubeconfig need the full
 * CLI.
 */
export async function completeWithoutClient(
  args: readonly string[],
  io: { env: NodeJS.ProcessEnv; stdout: { write(text: string): unknown } },
): Promise<boolean> {
  // Not imported: an ES import of node:util evaluates its lazy TextDecoder (5 ms of a Tab).
  const { parseArgs } = process.getBuiltinModule('node:util');
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { namespace: { type: 'string', short: 'n' }, kubeconfig: { type: 'string' }, context: { type: 'string' } },
    });
  } catch {
    return false;
  }
  const [kind, ...rest] = parsed.positionals;
  if (rest.length > 0 || !COMPLETION_KINDS.includes(kind as CompletionKind)) return false;
  const { kubeconfig, context } = parsed.values;
  const credentials = directCredentials({
    env: io.env,
    ...(kubeconfig === undefined ? {} : { kubeconfig }),
    ...(context === undefined ? {} : { context }),
  });
  if (credentials === undefined) return false;
  const namespace = parsed.values.namespace ?? credentials.namespace;
  const path =
    kind === 'services' ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/services` : '/api/v1/namespaces';
  const list = (await directGetJson(credentials, path, DIRECT_TIMEOUT_MS)) as { items?: V1Service[] | V1Namespace[] };
  const items = list.items ?? [];
  io.stdout.write(candidateLines(kind === 'services' ? serviceCandidates(items as V1Service[]) : namesOf(items)));
  return true;
}

/** `service/NAME` for each Service in `namespace` that serviceCandidates keeps. */
export async function completeServiceNames(namespace: string, ctx: CommandContext): Promise<string[]> {
  // Loaded here: printing a completion script needs no Kubernetes client.
  const { kubeCall } = await import('../core/kube/connection.js');
  const list = await kubeCall(`list Services in namespace ${namespace}`, () =>
    ctx.kube().core.listNamespacedService({ namespace }),
  );
  return serviceCandidates(list.items);
}

/** The names of every namespace, for the value of -n. */
export async function completeNamespaceNames(ctx: CommandContext): Promise<string[]> {
  const { kubeCall } = await import('../core/kube/connection.js');
  const list = await kubeCall('list namespaces', () => ctx.kube().core.listNamespace());
  return namesOf(list.items);
}

function namesOf(objects: readonly { metadata?: { name?: string } }[]): string[] {
  return objects
    .map((object) => object.metadata?.name)
    .filter((name): name is string => name !== undefined)
    .sort();
}

/**
 * The Services plan and sync-lb act on, as `service/NAME` sorted by name: type LoadBalancer,
 * or still carrying the load-balancer cleanup finalizer (their LB is due for deletion).
 */
export function serviceCandidates(services: readonly V1Service[]): string[] {
  return namesOf(
    services.filter(
      (service) =>
        service.spec?.type === 'LoadBalancer' ||
        (service.metadata?.finalizers ?? []).includes(LB_CLEANUP_FINALIZER),
    ),
  ).map((name) => `service/${name}`);
}
