// Colour: in a terminal the text output is coloured; `--no-color` and a non-empty NO_COLOR turn
// every colour off, leaving the same text; JSON in a terminal and any output into a pipe never
// carry escape codes. The terminal is a real pseudo-terminal (util-linux `script`), so the
// binary's own TTY detection decides, as in an interactive shell.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runBinary, startHarness, type Harness } from '../support/ccm.js';
import {
  createLoadBalancerService,
  createNode,
  deleteCreatedObjects,
  ensureNamespace,
  uniqueName,
  UNINITIALIZED_TAINT_KEY,
} from '../support/kube.js';
import { ansiEscape, hasScriptCommand, runInTerminal } from './cli-support.js';

/** Select Graphic Rendition: the escape sequences that set colours and text attributes. */
const colourCode = /\u001b\[[0-9;]*m/;
const colourCodes = /\u001b\[[0-9;]*m/g;
const fastSync = ['--settle-seconds', '0', '--poll-seconds', '0.05'];

const prefix = uniqueName('col');
const namespace = uniqueName('col');
let harness: Harness;

/** The terminal's text without colour codes and with the terminal's CRLF line ends as LF. */
function plainText(output: string): string {
  return output.replace(colourCodes, '').replaceAll('\r\n', '\n');
}

beforeAll(async () => {
  if (!hasScriptCommand) throw new Error('these tests need `script` from util-linux (Debian: bsdutils) to get a terminal');
  harness = await startHarness({
    seed: `
servers:
${[1, 2]
  .map(
    (i) => `  - name: ${prefix}-${i}
    flavor: flex-4-2
    zone: rma1
    interfaces: [{type: public, addresses: [5.102.149.${i}]}]`,
  )
  .join('\n')}
`,
  });
  await ensureNamespace(namespace);
  // Uninitialised nodes and a Service without a load balancer: plan has something to show.
  for (const i of [1, 2]) {
    await createNode(`${prefix}-${i}`, {
      ready: true,
      taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }],
    });
  }
  await createLoadBalancerService(namespace, 'web');
});
afterAll(async () => {
  await deleteCreatedObjects();
  await harness?.stop();
});

describe('plan in a terminal', () => {
  let coloured: string;

  beforeAll(async () => {
    const result = await runInTerminal(['plan'], { apiUrl: harness.sim.url });
    expect(result.code, result.output).toBe(0);
    coloured = result.output;
  });

  test('is coloured by default', () => {
    expect(coloured).toMatch(colourCode);
    expect(plainText(coloured)).toContain(`node/${prefix}-1`);
  });

  test('--no-color: the same text without a single escape code', async () => {
    const result = await runInTerminal(['--no-color', 'plan'], { apiUrl: harness.sim.url });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(ansiEscape);
    expect(plainText(result.output)).toBe(plainText(coloured));
  });

  test('NO_COLOR=1: the same as --no-color', async () => {
    const result = await runInTerminal(['plan'], { apiUrl: harness.sim.url, env: { NO_COLOR: '1' } });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(ansiEscape);
    expect(plainText(result.output)).toBe(plainText(coloured));
  });

  test('NO_COLOR set but empty does not count (no-color.org)', async () => {
    const result = await runInTerminal(['plan'], { apiUrl: harness.sim.url, env: { NO_COLOR: '' } });
    expect(result.output).toMatch(colourCode);
  });

  test('-o json is plain JSON, even in a terminal', async () => {
    const result = await runInTerminal(['-o', 'json', 'plan'], { apiUrl: harness.sim.url });
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(ansiEscape);
    expect(JSON.parse(result.output.replaceAll('\r\n', '\n'))).toMatchObject({ kind: 'Plan' });
  });
});

describe('other commands in a terminal', () => {
  test('init-nodes --dry-run with --no-color and with NO_COLOR: no escape codes', async () => {
    for (const options of [{ args: ['--no-color'] }, { args: [], env: { NO_COLOR: 'true' } }]) {
      const result = await runInTerminal([...options.args, 'init-nodes', '--dry-run'], {
        apiUrl: harness.sim.url,
        ...(options.env === undefined ? {} : { env: options.env }),
      });
      expect(result.code, result.output).toBe(0);
      expect(result.output).toContain(`node/${prefix}-1`);
      expect(result.output).not.toMatch(ansiEscape);
    }
  });

  test('a usage error with --no-color: no escape codes', async () => {
    const result = await runInTerminal(['--no-color', 'sync-lb', '--bogus'], { apiUrl: harness.sim.url });
    expect(result.code).toBe(1);
    expect(result.output).toContain("unknown option '--bogus'");
    expect(result.output).not.toMatch(ansiEscape);
  });

  // The live progress view of sync-lb redraws lines with cursor movements; those stay (they
  // are not colour). Colours go.
  test('sync-lb: coloured by default; --no-color leaves no colour codes', async () => {
    const first = await runInTerminal(['sync-lb', ...fastSync, '-n', namespace, 'service/web'], { apiUrl: harness.sim.url });
    expect(first.code, first.output).toBe(0);
    expect(first.output).toMatch(colourCode);

    const noColor = await runInTerminal(['--no-color', 'sync-lb', ...fastSync, '-n', namespace, 'service/web'], {
      apiUrl: harness.sim.url,
    });
    expect(noColor.code, noColor.output).toBe(0);
    expect(noColor.output).toContain(`${namespace}/web`);
    expect(noColor.output).not.toMatch(colourCode);
  });

  // chalk (under ink) reads --no-color from process.argv but not NO_COLOR: the view must take
  // the tool's own colour setting.
  test('sync-lb: NO_COLOR leaves no colour codes', async () => {
    const result = await runInTerminal(['sync-lb', ...fastSync, '-n', namespace, 'service/web'], {
      apiUrl: harness.sim.url,
      env: { NO_COLOR: '1' },
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain(`${namespace}/web`);
    expect(result.output).not.toMatch(colourCode);
  });
});

describe('into a pipe (a CronJob log)', () => {
  test.each([{ args: ['plan'] }, { args: ['init-nodes', '--dry-run'] }, { args: ['sync-lb', '--dry-run'] }, { args: ['-o', 'yaml', 'plan'] }])(
    '$args: no escape codes without any flag',
    async ({ args }) => {
      const result = await runBinary(args, { apiUrl: harness.sim.url });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).not.toBe('');
      expect(result.stdout).not.toMatch(ansiEscape);
      expect(result.stderr).not.toMatch(ansiEscape);
    },
  );
});
