// Usage errors: whatever is wrong on the command line is reported once, on stderr, as
// `error: …` naming the flag or argument, then `hint: …`; exit code 1; nothing on stdout; no
// stack trace; and nothing is contacted (the cluster and the API are unreachable here, so a
// command that got past its arguments would fail differently).
import { tmpdir } from 'node:os';
import { describe, expect, test } from 'vitest';
import { runBinary } from '../support/ccm.js';
import { expectUserError } from './cli-support.js';

/** Nothing to reach: a usage error must be found before any connection is made. */
const unreachable = {
  env: { KUBECONFIG: '/nonexistent/kubeconfig', CLOUDSCALE_API_URL: 'http://127.0.0.1:9', CLOUDSCALE_API_TOKEN: undefined },
};

const cases: { args: string[]; names: (string | RegExp)[]; hint?: RegExp }[] = [
  { args: ['bogus'], names: ["unknown command 'bogus'"] },
  { args: ['synclb'], names: ["unknown command 'synclb'", 'Did you mean sync-lb?'] },
  { args: ['sync-lb', '--bogus'], names: ["unknown option '--bogus'"], hint: /cloudscale-ccm sync-lb --help/ },
  { args: ['sync-lb', '--concurency', '2'], names: ['--concurency', 'Did you mean --concurrency?'], hint: /cloudscale-ccm sync-lb --help/ },
  { args: ['--bogus', 'plan'], names: ["unknown option '--bogus'"] },
  { args: ['-o', 'xml', 'plan'], names: ['--output', "'xml'", 'text, json, yaml'] },
  { args: ['plan', '-o', 'xml'], names: ['--output', "'xml'", 'text, json, yaml'] },
  { args: ['-o'], names: ['--output', 'argument missing'] },
  { args: ['sync-lb', '--concurrency', '0'], names: ['--concurrency', '"0"', '≥ 1'], hint: /cloudscale-ccm sync-lb --help/ },
  { args: ['sync-lb', '--concurrency', '2.5'], names: ['--concurrency', '"2.5"'] },
  // Number() would read these as 10, 16 and 0.
  { args: ['sync-lb', '--concurrency', '1e1'], names: ['--concurrency', '"1e1"'] },
  { args: ['sim', '--port', ''], names: ['--port', '""'] },
  { args: ['sync-lb', '--concurrency'], names: ['--concurrency', 'argument missing'] },
  { args: ['run', '--concurrency', 'many'], names: ['--concurrency', '"many"'], hint: /cloudscale-ccm run --help/ },
  { args: ['sync-lb', '--settle-seconds', '-1'], names: ['--settle-seconds', '"-1"'] },
  { args: ['sync-lb', '--poll-seconds', 'soon'], names: ['--poll-seconds', '"soon"'] },
  { args: ['sync-lb', '--wait-timeout', '0'], names: ['--wait-timeout', '"0"'] },
  { args: ['init-nodes', '--max-node-deletions', '-1'], names: ['--max-node-deletions', '"-1"', '≥ 0'] },
  { args: ['run', '--max-node-deletions', 'none'], names: ['--max-node-deletions', '"none"'] },
  { args: ['sim', '--port', '70000'], names: ['--port', '"70000"', '65535'], hint: /cloudscale-ccm sim --help/ },
  { args: ['sim', '--lb-provision-seconds', 'x'], names: ['--lb-provision-seconds', '"x"'] },
  { args: ['manifests', '--api-server-port', '0x10'], names: ['--api-server-port', '"0x10"', '1–65535'], hint: /cloudscale-ccm manifests --help/ },
  { args: ['completion'], names: ["missing required argument 'shell'"], hint: /cloudscale-ccm completion --help/ },
  { args: ['completion', 'tcsh'], names: ["'tcsh'", 'bash, zsh, fish'] },
  { args: ['cleanup', 'extra'], names: ['too many arguments', 'extra'] },
  { args: ['plan', '-f'], names: ['--filename', 'argument missing'] },
  { args: ['plan', 'web/hello'], names: ['"web/hello"', 'Service'], hint: /service\/NAME/ },
  { args: ['sync-lb', 'web/hello'], names: ['"web/hello"', 'Service'], hint: /service\/NAME/ },
  { args: ['plan', 'deployment/hello'], names: ['"deployment/hello"'] },
  { args: ['init-nodes', '--metrics-file', tmpdir()], names: ['--metrics-file', `${tmpdir()} is a directory`, 'cloudscale-ccm.prom'] },
  { args: ['run', '--metrics-file', '/nonexistent-dir/ccm.prom'], names: ['--metrics-file', 'the directory /nonexistent-dir does not exist'] },
  { args: ['plan', '-n', 'Shop', 'service/web'], names: ['--namespace', '-n "Shop" is not a valid namespace name', 'DNS labels'] },
  { args: ['sync-lb', '--namespace', 'shop/web'], names: ['-n "shop/web" is not a valid namespace name'] },
  // Combinations a command refuses itself, after commander.
  { args: ['init-nodes', '-l', 'role=worker', 'node-1'], names: ['--selector', 'not both'] },
  { args: ['plan', '-f', 'service.yaml', 'service/web'], names: ['-f', 'not both'] },
  { args: ['manifests', '--api-server-port', '6443'], names: ['--api-server-port', '--api-server-host'] },
  { args: ['manifests', '--schedule', 'every minute'], names: ['--schedule', '"every minute"'] },
  // The downtime budget: a duration, window or time zone that does not parse; a window without a budget.
  { args: ['sync-lb', '--max-downtime', '-5s'], names: ['--max-downtime', '"-5s"', 'negative'], hint: /cloudscale-ccm sync-lb --help/ },
  { args: ['run', '--max-downtime', '15'], names: ['--max-downtime', '"15"', 'no unit'] },
  { args: ['plan', '--max-downtime', 'soon'], names: ['--max-downtime', '"soon"'] },
  { args: ['sync-lb', '--max-downtime', '0s', '--window', 'Mon-Fri 02:00-04:00 Europe/Zurch=5m'], names: ['--window', 'unknown time zone', '"Europe/Zurch"'] },
  { args: ['manifests', '--window', 'Mo-Fr 02:00-04:00 UTC=5m'], names: ['--window', '"Mo-Fr"'] },
  { args: ['manifests', '--max-downtime', '2 minutes'], names: ['--max-downtime', '"2 minutes"'] },
  { args: ['run', '--watch-for', 'soon'], names: ['--watch-for', '"soon"'], hint: /cloudscale-ccm run --help/ },
  { args: ['run', '--watch-for', '50'], names: ['--watch-for', '"50"', 'no unit'] },
  { args: ['run', '--watch-for', '-5s'], names: ['--watch-for', '"-5s"', 'negative'] },
  { args: ['manifests', '--watch-for', '1.5s'], names: ['--watch-for', 'whole seconds', '1.5 s'], hint: /--watch-for 50s/ },
  { args: ['run', '--window', 'daily 02:00-04:00 UTC=5m'], names: ['--window', 'needs --max-downtime'] },
  { args: ['sync-lb', '--window', 'daily 02:00-04:00 UTC=5m'], names: ['--window', 'needs --max-downtime'] },
  { args: ['plan', '--window', 'daily 02:00-04:00 UTC=5m'], names: ['--window', 'needs --max-downtime'] },
];

describe('usage errors', () => {
  test.each(cases)('$args', async ({ args, names, hint }) => {
    const result = await runBinary(args, unreachable);
    expectUserError(result, ...names);
    if (hint !== undefined) expect(result.stderr).toMatch(new RegExp(`^hint: .*${hint.source}`, 'm'));
    // Reported once: a single error line.
    expect(result.stderr.match(/^error: /gm)).toHaveLength(1);
  });

  test('no command at all: the help on stderr, then one error naming the commands', async () => {
    const result = await runBinary([], unreachable);
    expectUserError(result, 'sync-lb', 'init-nodes');
    expect(result.stderr).toMatch(/^Usage: cloudscale-ccm /);
    expect(result.stderr).not.toContain('(outputHelp)');
  });

  test('`help` of an unknown command is a usage error naming it', async () => {
    const result = await runBinary(['help', 'nope'], unreachable);
    expectUserError(result, 'nope');
    expect(result.stderr).not.toContain('(outputHelp)');
  });
});
