// `cloudscale-ccm init-nodes [NODE…]`: one pass of node initialisation, metadata refresh and
// node lifecycle (src/core/apply/node-pass.ts). Prints a line (or a JSON document) per node and
// each warning of the pass once; fails the pass if any node did.
import { initNodes, type InitNodesResult } from '../core/apply/node-pass.js';
import type { ApplyNodeOptions } from '../core/apply/node-writes.js';
import { counted } from '../core/text/wording.js';
import { PartialFailureError, UsageError, errorMessage } from '../core/errors.js';
import { parseLabelSelector } from '../core/lb/selector.js';
import { plainYaml, resultDocument } from '../core/render/document.js';
import { nodeText, withNodeText } from '../core/render/node-report.js';
import { escapeUnprintable } from '../core/text/untrusted.js';
import type { CommandContext } from './context.js';
import { nodeDetails } from './pass-end.js';
import { asWriter, type WriterOptions } from './writer.js';

export type { InitNodesResult, NodeOutcome, NodeResult } from '../core/apply/node-pass.js';

export interface InitNodesOptions extends WriterOptions {
  dryRun: boolean;
  /** --max-node-deletions; default: max(1, 10% of the nodes with a cloudscale providerID). */
  maxNodeDeletions?: number;
  /**
   * -l/--selector: only nodes with these labels (kubectl syntax), when no node is named. The
   * deletion bound's share is then taken of the selected nodes.
   */
  selector?: string;
  /** Test seam, see ApplyNodeOptions.beforeWrite; the CLI never sets it. */
  beforeNodeWrite?: ApplyNodeOptions['beforeWrite'];
}

/** Version of the `-o json` document; bump on incompatible changes. */
export const INIT_NODES_JSON_VERSION = 1;

export async function initNodesCommand(
  nodeNames: string[],
  options: InitNodesOptions,
  ctx: CommandContext,
): Promise<InitNodesResult> {
  checkOptions(nodeNames, options);
  if (options.dryRun) return initNodesPass(nodeNames, options, ctx);
  return asWriter('init-nodes', ctx, options, (leased) => initNodesPass(nodeNames, options, leased), (result) =>
    result === undefined ? {} : nodeDetails(result),
  );
}

async function initNodesPass(nodeNames: string[], options: InitNodesOptions, ctx: CommandContext): Promise<InitNodesResult> {
  const { result, failures, interrupted } = await initNodes(
    nodeNames,
    {
      dryRun: options.dryRun,
      signal: ctx.signal,
      onEventError: (error, node, reason) =>
        ctx.stderr.write(`warning: could not record event ${reason} on node/${node}: ${error.message}\n`),
      ...(options.maxNodeDeletions === undefined ? {} : { maxNodeDeletions: options.maxNodeDeletions }),
      ...(options.selector === undefined ? {} : { selector: options.selector }),
      ...(options.beforeNodeWrite === undefined ? {} : { beforeNodeWrite: options.beforeNodeWrite }),
    },
    { kube: ctx.kube(), cloudscale: await ctx.cloudscale() },
  );

  print(result, ctx);
  for (const warning of result.warnings) ctx.stderr.write(`warning: ${escapeUnprintable(warning)}\n`);
  if (interrupted) {
    throw new PartialFailureError('init-nodes interrupted: nodes after the last line were not processed', failures, result);
  }
  if (failures.length > 0) {
    const refusal = result.deletions.refusal === null ? '' : ` (${result.deletions.refusal})`;
    throw new PartialFailureError(
      `init-nodes: ${failures.length} of ${counted(result.nodes.length, 'node')} left unchanged or failed${refusal}`,
      failures,
      result,
    );
  }
  return result;
}

function checkOptions(nodeNames: readonly string[], options: InitNodesOptions): void {
  if (
    options.maxNodeDeletions !== undefined &&
    (!Number.isInteger(options.maxNodeDeletions) || options.maxNodeDeletions < 0)
  ) {
    throw new UsageError(`--max-node-deletions takes a whole number ≥ 0, got ${options.maxNodeDeletions}`);
  }
  if (options.selector !== undefined && nodeNames.length > 0) {
    throw new UsageError('name nodes or give --selector, not both');
  }
  if (options.selector !== undefined) {
    try {
      parseLabelSelector(options.selector);
    } catch (error) {
      throw new UsageError(`--selector "${options.selector}": ${errorMessage(error)}`, {
        hint: 'use the kubectl label-selector syntax, e.g. -l node-role.kubernetes.io/worker or -l zone=rma1,env!=test',
      });
    }
  }
}

function print(result: InitNodesResult, ctx: CommandContext): void {
  switch (ctx.globals.output) {
    case 'json':
      ctx.stdout.write(`${JSON.stringify(jsonDocument(result), null, 2)}\n`);
      return;
    case 'yaml':
      ctx.stdout.write(plainYaml(jsonDocument(result)));
      return;
    case 'text':
      for (const node of result.nodes) ctx.stdout.write(`${escapeUnprintable(`${node.object} ${nodeText(node)}`)}\n`);
      if (result.deletions.refusal !== null) {
        ctx.stdout.write(`node deletions refused: ${result.deletions.refusal}\n`);
      }
      return;
  }
}

function jsonDocument(result: InitNodesResult): object {
  return resultDocument('InitNodesResult', INIT_NODES_JSON_VERSION, withNodeText(result));
}
