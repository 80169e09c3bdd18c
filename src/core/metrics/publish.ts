// Where a pass's metrics go: a file (node_exporter's textfile collector, a sidecar, a test) and a
// Prometheus Pushgateway, the convention for batch jobs. A push replaces (PUT) the group
// job=cloudscale-ccm, cluster=<cluster id>, command=<command>, so the last pass of each command
// stays visible and a terminal `sync-lb` never wipes what the CronJob's `run` pushed.
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError, UsageError } from '../errors.js';

export const PUSHGATEWAY_JOB = 'cloudscale-ccm';
export const PUSH_TIMEOUT_MS = 10_000;

/**
 * Checks --metrics-file before a pass starts, as --pushgateway is checked: the path must not be
 * a directory and its directory must exist. Whether it is writable shows only when the file is
 * written (the pass then warns).
 */
export function checkMetricsFilePath(path: string): string {
  const example = join(path, 'cloudscale-ccm.prom');
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) {
    throw new UsageError(`--metrics-file ${path} is a directory; the metrics are written to a file`, {
      hint: `name a file in it, e.g. --metrics-file ${example}`,
    });
  }
  const directory = dirname(path);
  if (statSync(directory, { throwIfNoEntry: false })?.isDirectory() !== true) {
    throw new UsageError(`--metrics-file ${path}: the directory ${directory} does not exist`, {
      hint: 'create it first, or name a file in an existing directory',
    });
  }
  return path;
}

/**
 * Writes `text` to `path` as a whole: into a temporary file beside it, then renamed over it, so
 * a collector reading the file never sees half of it. On failure the temporary file is removed:
 * a pass that cannot write its metrics leaves nothing behind.
 */
export async function writeMetricsFile(path: string, text: string): Promise<void> {
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode: 0o644 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new ConfigError(`cannot write the metrics file ${path}: ${(error as Error).message}`, {
      cause: error,
      hint: 'pass --metrics-file a path in an existing, writable directory',
    });
  }
}

/** The URL of the group a pass pushes to; label values go base64url-encoded, so any value fits. */
export function pushUrl(base: string, grouping: Readonly<Record<string, string>>): URL {
  const url = parsePushgatewayUrl(base);
  const path = [`job@base64`, encode(PUSHGATEWAY_JOB), ...Object.entries(grouping).flatMap(([k, v]) => [`${k}@base64`, encode(v)])];
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/metrics/${path.join('/')}`;
  return url;
}

/** Checks --pushgateway before a pass starts: a typo must not cost a whole pass. */
export function parsePushgatewayUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--pushgateway "${text}" is not a URL`, { hint: 'e.g. --pushgateway http://pushgateway.monitoring:9091' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--pushgateway "${text}" must be an http:// or https:// URL`, {
      hint: 'e.g. --pushgateway http://pushgateway.monitoring:9091',
    });
  }
  if (url.search !== '' || url.hash !== '') {
    throw new UsageError(`--pushgateway "${text}" must not have a query or fragment`, { hint: 'give the Pushgateway\'s base URL' });
  }
  return url;
}

/** PUTs `text` to the group; throws a ConfigError naming the gateway when it does not accept it. */
export async function pushMetrics(
  base: string,
  grouping: Readonly<Record<string, string>>,
  text: string,
  timeoutMs = PUSH_TIMEOUT_MS,
): Promise<void> {
  const url = pushUrl(base, grouping);
  const shown = `${url.origin}${url.pathname}`;
  let answer: Response;
  try {
    answer = await fetch(url, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' },
      body: text,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : causeOf(error);
    throw new ConfigError(`push to the Pushgateway ${shown} failed: ${reason}`, {
      cause: error,
      hint: 'check --pushgateway and that the Pushgateway is reachable from where the pass runs',
    });
  }
  if (!answer.ok) {
    const body = (await answer.text().catch(() => '')).trim().slice(0, 300);
    throw new ConfigError(`the Pushgateway ${shown} answered ${answer.status}${body === '' ? '' : `: ${body}`}`, {
      hint: 'check --pushgateway (its base URL, without /metrics) and the Pushgateway\'s log',
    });
  }
}

function encode(value: string): string {
  // The Pushgateway reads an empty base64 value as "=".
  return value === '' ? '=' : Buffer.from(value, 'utf8').toString('base64url');
}

function causeOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error && parts.length < 3) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.join(': ') || String(error);
}
