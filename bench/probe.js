// Preloaded into the CLI process the benchmark runs (`node --import ./bench/probe.js bin/…`):
// records every HTTP request the process sends (undici's diagnostics channel, which both the
// cloudscale client's fetch and client-node's undici publish to, and node:http's) and, at exit,
// the process's peak resident set size as the kernel counts it and its CPU time, into the JSON
// file named by BENCH_PROBE_OUT.
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync, writeFileSync } from 'node:fs';

const out = process.env.BENCH_PROBE_OUT;
const requests = [];
subscribe('undici:request:create', ({ request }) => {
  requests.push({ origin: request.origin, method: request.method, path: request.path });
});
// node:http(s) requests: the completion path's one GET (src/core/kube/direct-get.ts).
subscribe('http.client.request.start', ({ request }) => {
  requests.push({ origin: `${request.protocol}//${request.host}`, method: request.method, path: request.path });
});

process.on('exit', () => {
  if (out === undefined) return;
  const cpu = process.cpuUsage();
  // VmHWM: the peak resident set size of this process (Linux); maxRSS is the same from getrusage.
  const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  writeFileSync(
    out,
    JSON.stringify({
      peakRssKb: hwm === null ? process.resourceUsage().maxRSS : Number(hwm[1]),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      requests,
    }),
  );
});
