// The command-line surface: commander definitions of every subcommand and the global options.
// Each action lazily imports its command module, builds the context, and returns an exit code.
// Process concerns (signals, exit codes, printing the one top-level error) live in bin/.
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { createCommandContext, type CommandUses } from './composition.js';
import type { CliIo, CommandContext, GlobalOptions } from './commands/context.js';
import type { SimCommandOptions } from './commands/sim.js';
import { DEFAULT_WORLD, WORLD_NAMES } from './sim/world-names.js';
import { DEFAULT_POLL_SECONDS } from './core/apply/lb-watch.js';
import { DEFAULT_SETTLE_SECONDS } from './core/apply/lb-pass.js';
import { KubeApiError, UsageError } from './core/errors.js';
import { parseDuration as parseBudgetDuration, parseWindow, type MaintenanceWindow } from './core/plan/budget-window.js';
import { checkMetricsFilePath, parsePushgatewayUrl } from './core/metrics/publish.js';
import { clusterIdValue, namespaceName, nonNegativeNumber as nonNegativeNumberOf, portNumber as portNumberOf, wholeNumberFrom } from './core/option-values.js';
import { VERSION } from './version.js';

export type { CliIo } from './commands/context.js';

export { formatTopLevelError } from './core/render/error.js';

/**
 * Parses argv (without node and script) and runs the command. Resolves to the exit code the
 * command asked for, or to the error that ended it with whether `-v` was given (known only once
 * the options were parsed), for bin/ to report once.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
): Promise<{ exitCode: number } | { error: unknown; verbose: boolean }> {
  let exitCode = 0;
  let verbose = false;
  const program = buildProgram(io, {
    setExitCode: (code) => (exitCode = code),
    setVerbose: (value) => (verbose = value),
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with exit code 0.
      if (error.exitCode === 0) return { exitCode: 0 };
      return { error: usageErrorOf(error, program), verbose };
    }
    return { error, verbose };
  }
  return { exitCode };
}

/**
 * The commands, arguments and options as commander holds them, for reading (the completion
 * scripts' test checks every script against them); nothing is parsed or run.
 */
export function programDefinition(): Command {
  const processIo: CliIo = {
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: new AbortController().signal,
  };
  return buildProgram(processIo, { setExitCode: () => undefined, setVerbose: () => undefined });
}

/** Every -o format; markdown (for a pull-request comment) is written by plan only. */
const OUTPUT_FORMATS = ['text', 'json', 'yaml', 'markdown'] as const;

/** The -o formats a subcommand writes (all of them while none is named yet). */
export function outputFormatsOf(commandName: string | undefined): string[] {
  return OUTPUT_FORMATS.filter((format) => format !== 'markdown' || commandName === undefined || commandName === 'plan');
}

/** The subcommand whose arguments a CommanderError is about (see the exitOverride in buildProgram). */
const commandOfError = new WeakMap<CommanderError, string>();

function usageErrorOf(error: CommanderError, program: Command): UsageError {
  const commandName = commandOfError.get(error);
  const helpCommand = commandName === undefined ? 'cloudscale-ccm --help' : `cloudscale-ccm ${commandName} --help`;
  if (error.code === 'commander.help') {
    // Commander printed the program's help to stderr because no (known) command was named;
    // its message is only a placeholder.
    const commands = program.commands.filter((c) => !hiddenCommands.has(c.name())).map((c) => c.name());
    const [first, second] = program.args;
    const message =
      first === 'help' && second !== undefined
        ? `unknown command '${second}'`
        : `no command given: name one of ${commands.join(', ')}`;
    return new UsageError(message, { hint: `${helpCommand} describes every command` });
  }
  return new UsageError(error.message.replace(/^error: /, ''), { hint: `run ${helpCommand} for usage` });
}

const hiddenCommands = new Set(['__complete']);

/** Where -n comes from when it is not given: kubectl's rule (DefaultNamespace, service-args.ts). */
const CONTEXT_NAMESPACE = "(default: the kubeconfig context's namespace, else default)";

/** For sim, manifests and completion: they never load the Kubernetes client. */
const noCluster: CommandUses = { cluster: false };

function buildProgram(
  io: CliIo,
  report: { setExitCode: (code: number) => void; setVerbose: (verbose: boolean) => void },
): Command {
  const program = new Command('cloudscale-ccm')
    .description(
      'One-shot cloud controller manager for cloudscale.ch: initialise nodes and reconcile load balancers, with a plan before apply.',
    )
    .version(VERSION, '--version')
    .addOption(new Option('--kubeconfig <file>', 'path to the kubeconfig file (default: KUBECONFIG, ~/.kube/config, in-cluster)'))
    .addOption(new Option('--context <name>', 'kubeconfig context to use'))
    .addOption(
      new Option('-o, --output <format>', 'output format (markdown: plan only)').choices(OUTPUT_FORMATS).default('text'),
    )
    .addOption(new Option('--no-color', 'disable colours (also NO_COLOR)'))
    .addOption(new Option('--api-url <url>', 'cloudscale API base URL (default: CLOUDSCALE_API_URL or https://api.cloudscale.ch)'))
    .addOption(new Option('--token-file <file>', 'file holding the cloudscale API token (default: CLOUDSCALE_API_TOKEN, CLOUDSCALE_ACCESS_TOKEN, Secret kube-system/cloudscale)'))
    .addOption(new Option('--cluster-id <id>', 'cluster identity for ownership tags (default: uid of namespace kube-system)').argParser(clusterId))
    .addOption(new Option('-v, --verbose', 'on an error, also print its causes (and the stack trace of an unexpected one)'))
    .showSuggestionAfterError(true)
    // Subcommand help lists the global options too: they are accepted after the subcommand.
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      // Usage errors are reported once, by bin/, from the thrown UsageError.
      writeErr: (text) => (text.startsWith('error:') ? undefined : io.stderr.write(text)),
    });

  // Commands that do not talk to the cluster say so, and start without loading its client.
  const run = (
    action: (command: Command, ctx: CommandContext) => Promise<number | void>,
    uses: CommandUses = { cluster: true },
  ) =>
    async function (this: Command) {
      const ctx = await createCommandContext(globalsOf(this, io), io, uses);
      report.setVerbose(ctx.globals.verbose);
      try {
        const code = await action(this, ctx);
        report.setExitCode(code ?? 0);
      } catch (error) {
        throw withApiServer(error, ctx);
      }
    };

  program
    .command('init-nodes')
    .description('initialise uninitialised nodes, refresh node metadata, apply node lifecycle (one pass)')
    .argument('[node...]', 'only these nodes')
    .option('--dry-run', 'show what would be done, write nothing', false)
    .option('-l, --selector <selector>', 'only nodes with these labels (kubectl syntax)')
    .addOption(
      new Option('--max-node-deletions <n>', 'refuse to delete more Nodes than this in one pass; 0 never deletes (default: 10 % of the nodes, at least 1)').argParser(wholeNumberAtLeast('--max-node-deletions', 0)),
    )
    .addOption(waitOption())
    .addOption(leaseSecondsOption())
    .addOption(metricsFileOption())
    .addOption(pushgatewayOption())
    .action(
      run(async (command, ctx) => {
        const { initNodesCommand } = await import('./commands/init-nodes.js');
        const options = command.opts<{ dryRun: boolean; maxNodeDeletions?: number; selector?: string; wait?: boolean; leaseSeconds: number }>();
        await initNodesCommand(command.args, options, ctx);
      }),
    );

  program
    .command('sync-lb')
    .description('reconcile the cloudscale load balancers of Services of type LoadBalancer (one pass)')
    .argument('[service...]', 'only these Services: service/NAME (in --namespace)')
    .option('-n, --namespace <ns>', `namespace of the named Services ${CONTEXT_NAMESPACE}`, namespaceArg)
    .addOption(new Option('--concurrency <n>', 'Services reconciled at once').argParser(positiveInt('--concurrency')).default(4))
    .addOption(new Option('--wait-timeout <seconds>', 'give up waiting for a load balancer after this long').argParser(positiveInt('--wait-timeout')).default(600))
    .addOption(new Option('--settle-seconds <s>', 'pause between deleting and re-creating similar objects (the API needs ~5 s)').argParser(nonNegativeNumber('--settle-seconds')).default(DEFAULT_SETTLE_SECONDS))
    .addOption(new Option('--poll-seconds <s>', 'interval between reads of a load balancer that is "changing"').argParser(nonNegativeNumber('--poll-seconds')).default(DEFAULT_POLL_SECONDS))
    .addOption(drainSecondsOption())
    .addOption(maxDowntimeOption())
    .addOption(windowOption())
    .option('--dry-run', 'plan only, write nothing (same as plan)', false)
    .addOption(waitOption())
    .addOption(leaseSecondsOption())
    .addOption(metricsFileOption())
    .addOption(pushgatewayOption())
    .action(
      run(async (command, ctx) => {
        const o = command.opts<{
          namespace?: string;
          concurrency: number;
          waitTimeout: number;
          settleSeconds: number;
          pollSeconds: number;
          drainSeconds: number;
          dryRun: boolean;
          wait: boolean;
          leaseSeconds?: number;
          maxDowntime?: number;
          window?: MaintenanceWindow;
        }>();
        if (o.dryRun) {
          // The same output and exit code as `plan`: 1 when it shows problems.
          const { planCommand } = await import('./commands/plan.js');
          return (await planCommand(command.args, { namespace: o.namespace, detailedExitcode: false, drainSeconds: o.drainSeconds, ...budgetFlags(o) }, ctx)).exitCode;
        }
        const { syncLbCommand } = await import('./commands/sync-lb.js');
        await syncLbCommand(command.args, o, ctx);
      }),
    );

  program
    .command('plan')
    .description('show every change init-nodes and sync-lb would make, with impact and expected downtime; writes nothing')
    .argument('[service...]', 'only these Services: service/NAME (in --namespace)')
    .option('-n, --namespace <ns>', `namespace of the named Services and of -f manifests without one ${CONTEXT_NAMESPACE}`, namespaceArg)
    .option('-f, --filename <file>', 'plan a proposed Service manifest (YAML/JSON, several documents allowed; - for stdin)')
    .option('--detailed-exitcode', 'exit 0 when nothing would change, 2 when changes are pending, 1 on error', false)
    .option('--out <file>', 'also save the plan with a fingerprint of what it rests on, for `cloudscale-ccm apply FILE`')
    .addOption(drainSecondsOption())
    .addOption(maxDowntimeOption())
    .addOption(windowOption())
    .action(
      run(async (command, ctx) => {
        const { planCommand } = await import('./commands/plan.js');
        const o = command.opts<{ namespace?: string; filename?: string; detailedExitcode: boolean; drainSeconds: number; out?: string; maxDowntime?: number; window?: MaintenanceWindow }>();
        const result = await planCommand(command.args, o, ctx);
        return result.exitCode;
      }),
    );

  program
    .command('apply')
    .description('apply a plan saved by plan --out exactly as saved (held-back changes too), or refuse it if anything it rests on changed')
    .argument('<file>', 'the file plan --out wrote')
    .addOption(new Option('--concurrency <n>', 'Services reconciled at once').argParser(positiveInt('--concurrency')).default(4))
    .addOption(new Option('--wait-timeout <seconds>', 'give up waiting for a load balancer after this long').argParser(positiveInt('--wait-timeout')).default(600))
    .addOption(new Option('--settle-seconds <s>', 'pause between deleting and re-creating similar objects (the API needs ~5 s)').argParser(nonNegativeNumber('--settle-seconds')).default(DEFAULT_SETTLE_SECONDS))
    .addOption(new Option('--poll-seconds <s>', 'interval between reads of a load balancer that is "changing"').argParser(nonNegativeNumber('--poll-seconds')).default(DEFAULT_POLL_SECONDS))
    .addOption(waitOption())
    .addOption(leaseSecondsOption())
    .action(
      run(async (command, ctx) => {
        const { applyCommand } = await import('./commands/apply.js');
        const o = command.opts<{ concurrency: number; waitTimeout: number; settleSeconds: number; pollSeconds: number; wait?: boolean; leaseSeconds: number }>();
        await applyCommand(command.args[0]!, o, ctx);
      }),
    );

  program
    .command('cleanup')
    .description('delete load balancers this cluster left behind (tagged for it, Service gone)')
    .option('--all', 'delete every load balancer of this cluster (before deleting the cluster)', false)
    .option('--include-untagged', 'also delete load balancers without the kube-system-uid tag of this cluster (another cluster with the same id may own them)', false)
    .option('--yes', 'do not ask for confirmation', false)
    .option('--dry-run', 'list what would be deleted, delete nothing', false)
    .addOption(waitOption())
    .addOption(leaseSecondsOption())
    .addOption(metricsFileOption())
    .addOption(pushgatewayOption())
    .action(
      run(async (command, ctx) => {
        const { cleanupCommand } = await import('./commands/cleanup.js');
        await cleanupCommand(command.opts<{ all: boolean; includeUntagged: boolean; yes: boolean; dryRun: boolean; wait?: boolean; leaseSeconds: number }>(), ctx);
      }),
    );

  program
    .command('run')
    .description('init-nodes then sync-lb under a Lease: what the CronJob runs')
    .addOption(waitOption())
    .addOption(leaseSecondsOption())
    .addOption(metricsFileOption())
    .addOption(pushgatewayOption())
    .option('--force', 'act even while another cloud controller manager holds kube-system/cloud-controller-manager', false)
    .addOption(maxDowntimeOption())
    .addOption(windowOption())
    .addOption(new Option('--concurrency <n>', 'Services reconciled at once').argParser(positiveInt('--concurrency')).default(4))
    .addOption(new Option('--max-node-deletions <n>', 'refuse to delete more Nodes than this in one pass; 0 never deletes (default: 10 % of the nodes, at least 1)').argParser(wholeNumberAtLeast('--max-node-deletions', 0)))
    .addOption(new Option('--wait-timeout <seconds>', 'give up waiting for a load balancer after this long').argParser(positiveInt('--wait-timeout')).default(600))
    .addOption(new Option('--settle-seconds <s>', 'pause between deleting and re-creating similar objects (the API needs ~5 s)').argParser(nonNegativeNumber('--settle-seconds')).default(DEFAULT_SETTLE_SECONDS))
    .addOption(new Option('--poll-seconds <s>', 'interval between reads of a load balancer that is "changing"').argParser(nonNegativeNumber('--poll-seconds')).default(DEFAULT_POLL_SECONDS))
    .addOption(drainSecondsOption())
    .addOption(watchForOption('after the pass, watch Nodes and Services and react to each change within about a second, until this long after the start (e.g. 50s); 0: one pass only'))
    .action(
      run(async (command, ctx) => {
        const { runCommand } = await import('./commands/run.js');
        const { watchFor, ...options } = command.opts<{
          watchFor?: number;
          wait?: boolean;
          leaseSeconds: number;
          force: boolean;
          concurrency: number;
          maxNodeDeletions?: number;
          waitTimeout: number;
          settleSeconds: number;
          pollSeconds: number;
          drainSeconds: number;
        }>();
        await runCommand({ ...options, ...(watchFor === undefined ? {} : { watchForMs: watchFor * 1000 }) }, ctx);
      }),
    );

  program
    .command('status')
    .description('print what the last passes recorded (kube-system/cloudscale-ccm-status) and how long ago one succeeded; with service/NAME, its load balancer as it serves')
    .argument('[service...]', "service/NAME (in --namespace): its load balancer's listeners, pools and members as they serve now")
    .option('--fail-if-older-than <duration>', 'exit 1 when the last successful pass is older than this (e.g. 5m) or the last pass did not succeed: a probe or an alert')
    .option('-n, --namespace <ns>', "namespace of the named Service (default: the kubeconfig context's namespace, else default)")
    .addOption(
      new Option('--drain-seconds <s>', "the passes' --drain-seconds: when a draining member is removed")
        .argParser(nonNegativeNumber('--drain-seconds'))
        .default(60),
    )
    .action(
      run(async (command, ctx) => {
        const { statusCommand, statusServiceCommand } = await import('./commands/status.js');
        const o = command.opts<{ failIfOlderThan?: string; namespace?: string; drainSeconds: number }>();
        if (command.args.length === 0) return void (await statusCommand(o, ctx));
        if (o.failIfOlderThan !== undefined) {
          throw new UsageError('--fail-if-older-than is about the recorded passes, not a Service', { hint: 'leave out service/NAME for the probe' });
        }
        await statusServiceCommand(command.args, o, ctx);
      }),
    );

  program
    .command('sim')
    .description('start the built-in cloudscale API simulator (prints CLOUDSCALE_API_URL=… first)')
    // It reads no kubeconfig, token or output format: its help shows only its own options.
    .configureHelp({ showGlobalOptions: false })
    .option('--seed <file>', 'seed file (YAML or JSON) with servers, networks and floating IPs')
    .addOption(new Option('--port <n>', 'port on 127.0.0.1 (default: a free one)').argParser(portNumber('--port', 0)))
    .addOption(new Option('--lb-provision-seconds <s>', 'how long new load balancers stay "changing"').argParser(nonNegativeNumber('--lb-provision-seconds')))
    .option('--token <token>', 'require this bearer token')
    .addOption(new Option('--latency-ms <ms>', 'delay every API request by this many milliseconds').argParser(nonNegativeNumber('--latency-ms')))
    .option('--pool-delete-keeps-listeners', 'a pool delete leaves its listeners (pool: null) instead of deleting them')
    .addOption(new Option('--world <world>', `how strictly it plays the real API's load balancers (default: ${DEFAULT_WORLD})`).choices(WORLD_NAMES))
    .addOption(new Option('--time-scale <factor>', 'multiply every modelled duration (0.05: 20 times faster)').argParser(nonNegativeNumber('--time-scale')))
    .action(
      run(async (command, ctx) => {
        const { simCommand } = await import('./commands/sim.js');
        await simCommand(
          command.opts<SimCommandOptions>(),
          { stdout: ctx.stdout as NodeJS.WritableStream, stderr: ctx.stderr as NodeJS.WritableStream, signal: ctx.signal },
        );
      }, noCluster),
    );

  program
    .command('manifests')
    .description('print the CronJob and RBAC manifests for kubectl apply -f - (the token Secret is created separately, see the output)')
    .option('--image <ref>', 'container image of cloudscale-ccm')
    .option('--schedule <cron>', 'CronJob schedule', '* * * * *')
    .option('--api-server-host <host>', 'reach the API server at this address (before a CNI or kube-proxy exists)')
    .addOption(new Option('--api-server-port <n>', 'with --api-server-host (default 6443)').argParser(portNumber('--api-server-port', 1)))
    .addOption(maxDowntimeOption("each Job's run --max-downtime: changes predicted to interrupt a port longer are held for approval (default 0s)"))
    .addOption(windowOption("each Job's run --window: a maintenance window with a larger budget, e.g. \"Mon-Fri 02:00-04:00 Europe/Zurich=5m\""))
    .addOption(pushgatewayOption("each Job's run --pushgateway: push the metrics of every pass there"))
    .addOption(watchForOption("each Job's run --watch-for: reacts to changes until this long after its start (default 50s); 0: one pass per Job"))
    .addOption(
      new Option('--admission-policy <mode>', 'the admission policy checking load-balancer annotations at kubectl apply: deny refuses a malformed one, warn lets kubectl warn, none leaves it out')
        .choices(['deny', 'warn', 'none'])
        .default('deny'),
    )
    .action(
      run(async (command, ctx) => {
        const { manifestsCommand } = await import('./commands/manifests.js');
        const { watchFor, ...options } = command.opts<{ image?: string; schedule: string; apiServerHost?: string; apiServerPort?: number; watchFor?: number; admissionPolicy: 'deny' | 'warn' | 'none' }>();
        await manifestsCommand({ ...options, ...(watchFor === undefined ? {} : { watchForMs: watchFor * 1000 }) }, ctx);
      }, noCluster),
    );

  program
    .command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(
      run(async (command, ctx) => {
        const { completionCommand } = await import('./commands/completion.js');
        await completionCommand(command.args[0] as 'bash' | 'zsh' | 'fish', ctx);
      }, noCluster),
    );

  // Used by the completion scripts for dynamic candidates; not shown in --help.
  program
    .command('__complete', { hidden: hiddenCommands.has('__complete') })
    .addArgument(new Argument('<kind>').choices(['services', 'namespaces']))
    .option('-n, --namespace <ns>', `namespace ${CONTEXT_NAMESPACE}`)
    .action(
      run(async (command, ctx) => {
        const { completeCommand } = await import('./commands/completion.js');
        await completeCommand(command.args[0] as 'services' | 'namespaces', command.opts<{ namespace?: string }>(), ctx);
      }),
    );

  // Remember which subcommand a usage error concerns, so the hint can point at its --help.
  for (const command of program.commands) {
    command.exitOverride((error) => {
      commandOfError.set(error, command.name());
      throw error;
    });
  }

  return program;
}

/** An API server that did not answer at all: the message names it and where it was configured. */
function withApiServer(error: unknown, ctx: CommandContext): unknown {
  if (!(error instanceof KubeApiError) || error.status !== 0) return error;
  const { config, source } = ctx.kube();
  const server = config.getCurrentCluster()?.server ?? '(no server)';
  return new KubeApiError(`${error.message} (API server ${server}, from ${source})`, {
    status: 0,
    cause: error,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  });
}

function globalsOf(command: Command, io: CliIo): GlobalOptions {
  // Picked field by field: the merged options also hold the subcommand's own flags.
  const o = command.optsWithGlobals<Omit<GlobalOptions, 'verbose'> & { verbose?: boolean }>();
  if (!outputFormatsOf(command.name()).includes(o.output)) {
    throw new UsageError(`-o ${o.output} is for plan only; ${command.name()} writes text, json or yaml`, {
      hint: `run cloudscale-ccm ${command.name()} with -o text, -o json or -o yaml`,
    });
  }
  const noColorEnv = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';
  return {
    ...(o.kubeconfig === undefined ? {} : { kubeconfig: o.kubeconfig }),
    ...(o.context === undefined ? {} : { context: o.context }),
    output: o.output,
    color: o.color && !noColorEnv && io.stdout.isTTY === true,
    ...(o.apiUrl === undefined ? {} : { apiUrl: o.apiUrl }),
    ...(o.tokenFile === undefined ? {} : { tokenFile: o.tokenFile }),
    ...(o.clusterId === undefined ? {} : { clusterId: o.clusterId }),
    verbose: o.verbose === true,
  };
}

// The options of every command that writes: it holds the writers' Lease for its pass.
function waitOption(): Option {
  return new Option('--wait', 'wait for another pass holding the Lease to finish (or to be confirmed dead) instead of exiting');
}

function metricsFileOption(): Option {
  return new Option('--metrics-file <path>', 'write the metrics of the pass to this file (Prometheus text format), replacing it').argParser(
    asArgumentError(checkMetricsFilePath),
  );
}

function pushgatewayOption(
  description = 'push the metrics of the pass to this Prometheus Pushgateway (group job=cloudscale-ccm, cluster, command)',
): Option {
  return new Option('--pushgateway <url>', description).argParser(
    (value: string) => {
      try {
        parsePushgatewayUrl(value);
      } catch (error) {
        throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
      }
      return value;
    },
  );
}

// The downtime budget of sync-lb, run and plan (src/core/plan/budget.ts, budget-window.ts).
function maxDowntimeOption(
  description = 'hold back changes predicted to interrupt a serving port longer than this (e.g. 0s, 15s, 2m) until approved; unset: nothing is held',
): Option {
  return new Option('--max-downtime <duration>', description).argParser(asArgumentError((value) => parseBudgetDuration(value, '--max-downtime')));
}

function windowOption(
  description = 'a maintenance window with its own budget, e.g. "Mon-Fri 02:00-04:00 Europe/Zurich=5m" (needs --max-downtime)',
): Option {
  return new Option('--window <window>', description).argParser(asArgumentError((value) => parseWindow(value)));
}

/** The budget flags a command was given, for passing on. */
function budgetFlags(o: { maxDowntime?: number; window?: MaintenanceWindow }): { maxDowntime?: number; window?: MaintenanceWindow } {
  return { ...(o.maxDowntime === undefined ? {} : { maxDowntime: o.maxDowntime }), ...(o.window === undefined ? {} : { window: o.window }) };
}

/** --watch-for: seconds of a duration such as 50s or 2m; a bare 0 turns the watch off. */
function watchForOption(description: string): Option {
  return new Option('--watch-for <duration>', description).argParser(
    asArgumentError((value) => (value.trim() === '0' ? 0 : parseBudgetDuration(value, '--watch-for'))),
  );
}

/** A parser whose UsageError commander reports like its own invalid arguments (with the hint). */
function asArgumentError<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      if (error instanceof UsageError) throw new InvalidArgumentError(`${error.message}${error.hint === undefined ? '' : `; ${error.hint}`}`);
      throw error;
    }
  };
}

function drainSecondsOption(): Option {
  return new Option(
    '--drain-seconds <s>',
    'a member whose node leaves a pool is disabled (no new connections) and deleted by a later pass after this long; 0 deletes it at once',
  )
    .argParser(nonNegativeNumber('--drain-seconds'))
    .default(60);
}

function leaseSecondsOption(): Option {
  return new Option('--lease-seconds <s>', 'duration of the Lease held for the pass: renewed every sixth of it, writing stops after half of it unrenewed, a killed pass blocks others this long')
    .argParser(wholeNumberAtLeast('--lease-seconds', 3))
    .default(60);
}

// The values of flags, checked by the rules in src/core/option-values.ts (a saved plan's options
// are checked by the same ones), reported by commander like its own invalid arguments.
const clusterId = asArgumentError(clusterIdValue);
const namespaceArg = asArgumentError(namespaceName);
const positiveInt = (flag: string) => asArgumentError(wholeNumberFrom(flag, 1));
const wholeNumberAtLeast = (flag: string, min: number) => asArgumentError(wholeNumberFrom(flag, min));
const nonNegativeNumber = (flag: string) => asArgumentError(nonNegativeNumberOf(flag));
const portNumber = (flag: string, min: 0 | 1) => asArgumentError(portNumberOf(flag, min));
