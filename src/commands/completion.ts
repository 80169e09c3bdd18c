// `cloudscale-ccm completion bash|zsh|fish` prints the script shipped under completions/, so
// the printed and the installed scripts are the same file. The scripts call the hidden
// `cloudscale-ccm __complete services` for Service names, served by completeCommand.
import type { V1Service } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { assertNever } from '../core/errors.js';
import type { CommandContext } from './context.js';

export type CompletionShell = 'bash' | 'zsh' | 'fish';
export type CompletionKind = 'services';

/** The finalizer the service controller keeps while a load balancer may still exist. */
const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

/** Works from src/ (tests) and dist/ (the package): both sit one level below the root. */
export function completionScriptPath(shell: CompletionShell): string {
  return fileURLToPath(new URL(`../../completions/cloudscale-ccm.${shell}`, import.meta.url));
}

export async function completionCommand(shell: CompletionShell, ctx: CommandContext): Promise<void> {
  ctx.stdout.write(await readFile(completionScriptPath(shell), 'utf8'));
}

/** Candidates for the shell scripts, one per line; nothing else is written to stdout. */
export async function completeCommand(
  kind: CompletionKind,
  options: { namespace: string },
  ctx: CommandContext,
): Promise<void> {
  let candidates: string[];
  switch (kind) {
    case 'services':
      candidates = await completeServiceNames(options.namespace, ctx);
      break;
    default:
      assertNever(kind, 'completion kind');
  }
  ctx.stdout.write(candidates.map((candidate) => `${candidate}\n`).join(''));
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

/**
 * The Services plan and sync-lb act on, as `service/NAME` sorted by name: type LoadBalancer,
 * or still carrying the load-balancer cleanup finalizer (their LB is due for deletion).
 */
export function serviceCandidates(services: readonly V1Service[]): string[] {
  return services
    .filter(
      (service) =>
        service.spec?.type === 'LoadBalancer' ||
        (service.metadata?.finalizers ?? []).includes(LB_CLEANUP_FINALIZER),
    )
    .map((service) => service.metadata?.name)
    .filter((name): name is string => name !== undefined)
    .sort()
    .map((name) => `service/${name}`);
}
