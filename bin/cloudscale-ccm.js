#!/usr/bin/env node
// The process: argv → command → exit code. Nothing else lives here.
//   0  success, or nothing to do
//   1  error (usage, configuration, API), or a pass in which some objects failed
//   2  plan --detailed-exitcode: changes are pending
//   130  a second SIGTERM or SIGINT: stopped at once, the Lease released on the way out
const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  // Only a checkout has the `node` dev dependency (Node 24) beside this file; an installed
  // package has no newer Node to point at. Written for old Node: no newer syntax or API.
  const { existsSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const script = fileURLToPath(import.meta.url);
  const checkoutNode = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  const hint = existsSync(checkoutNode)
    ? `run it through npm in the checkout (npx cloudscale-ccm …), or as ${checkoutNode} ${script} …: both use the Node 24 the project installs`
    : `install Node.js 22 or newer and run it again; to leave this Node as it is, run it with Node 24 from npm: npx -y -p node@24 -- node ${script} …`;
  process.stderr.write(`cloudscale-ccm needs Node.js 22 or newer (this is ${process.version}).\nhint: ${hint}\n`);
  process.exit(1);
}

// V8 sizes its young generation from the host's memory (128 MB on a 24 GB machine) and grows it
// to that size under a long pass's steady allocation, although little of it outlives a request:
// it stays at its initial size here (a no-op pass over 1,000 Services: docs/benchmarks.md). Only
// the growth factor can still be set once V8 runs; NODE_OPTIONS=--max-semi-space-size still applies.
const { setFlagsFromString } = await import('node:v8');
setFlagsFromString('--semi-space-growth-factor=1');

// A reader that closes the pipe early (`plan | head`) ends the output, not the command: what
// is written after is dropped, and a writing pass still ends between steps as it would have
// (Lease released, record written), with its own exit code. Node reports the closed pipe as an
// 'error' event (EPIPE), which unhandled would end the process with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

// A Tab asking for Service or namespace names is served with one GET when the kubeconfig allows
// it, before the CLI and the Kubernetes client load (src/commands/completion.ts); otherwise the
// CLI runs.
if (process.argv[2] === '__complete') {
  const { completeWithoutClient } = await import('../dist/commands/completion.js');
  let exitCode;
  try {
    if (await completeWithoutClient(process.argv.slice(3), process)) exitCode = 0;
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    exitCode = 1;
  }
  if (exitCode !== undefined) await new Promise(() => process.stdout.write('', () => process.exit(exitCode)));
}

const { runCli, formatTopLevelError } = await import('../dist/cli.js');
const { LAST_WORDS_MS, processStop, stepBoundaries } = await import('../dist/core/stop.js');
const { escapeUnprintable } = await import('../dist/core/text/untrusted.js');

const controller = new AbortController();
let interrupted = 0;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    interrupted += 1;
    // The first signal lets the pass stop between steps, once the step pair in progress (a
    // listener or member re-created) is complete. A second ends the process without waiting for
    // the pair, but frees the Lease on its way out (src/core/stop.ts: the last words, at most
    // LAST_WORDS_MS), so the next pass may repair the pair at once. A third exits at once.
    if (interrupted > 2) process.exit(130);
    if (interrupted === 2) {
      process.stderr.write(`stopping now: ${signal} again: the Lease is released, then the process exits (a third ${signal} exits at once)\n`);
      for (const { word, problem } of await processStop.sayLastWords(LAST_WORDS_MS)) {
        process.stderr.write(`warning: could not ${word.what}: ${escapeUnprintable(problem)}; ${word.otherwise}\n`);
      }
      process.exit(130);
    }
    const reason = new Error(`interrupted by ${signal}`);
    const { deferred } = processStop.request({ reason, abort: () => controller.abort(reason) });
    if (deferred) {
      process.stderr.write(
        `stopping: ${signal}: the listener or member being re-created is put back first, then the pass stops (a second ${signal} stops at once, releasing the Lease)\n`,
      );
    }
  });
}

// Test seam (src/core/stop.ts): a pause after every step, announced on stderr, so that a test can
// signal a real process at an exact step boundary.
const stepPauseMs = Number(process.env.CLOUDSCALE_CCM_TEST_STEP_PAUSE_MS ?? 0);
if (stepPauseMs > 0) {
  stepBoundaries.afterStep = async (step) => {
    process.stderr.write(`step-boundary: after ${step}\n`);
    await new Promise((resolve) => setTimeout(resolve, stepPauseMs));
  };
}

try {
  const outcome = await runCli(process.argv.slice(2), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: controller.signal,
  });
  if ('error' in outcome) {
    process.stderr.write(formatTopLevelError(outcome.error, { verbose: outcome.verbose }));
    process.exitCode = 1;
  } else {
    process.exitCode = outcome.exitCode;
  }
} catch (error) {
  // A failure outside any command (a bug): report it with its stack.
  process.stderr.write(formatTopLevelError(error, { verbose: true }));
  process.exitCode = 1;
}
