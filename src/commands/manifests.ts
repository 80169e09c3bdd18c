// `cloudscale-ccm manifests`: prints the in-cluster deployment for `kubectl apply -f -`.
// Reads nothing from the cluster; the same output is committed as deploy/cloudscale-ccm.yaml.
import { isIP } from 'node:net';
import { cronScheduleProblem } from '../core/deploy/cron.js';
import {
  buildManifests,
  manifestsAsList,
  manifestsHeader,
  renderManifestsYaml,
  type ManifestOptions,
} from '../core/deploy/manifests.js';
import type { AdmissionMode } from '../core/deploy/admission-policy.js';
import { UsageError } from '../core/errors.js';
import { formatSeconds } from '../core/plan/budget.js';
import type { MaintenanceWindow } from '../core/plan/budget-window.js';
import { VERSION } from '../version.js';
import type { CommandContext } from './context.js';

export interface ManifestsCommandOptions {
  /** --max-downtime in seconds (the CLI parses it): each Job's `run --max-downtime`; default 0s. */
  maxDowntime?: number;
  /** --window (the CLI parses and checks it): each Job's `run --window`. */
  window?: MaintenanceWindow;
  image?: string;
  schedule: string;
  /** --api-server-host: reach the API server here instead of the kubernetes Service. */
  apiServerHost?: string;
  /** --api-server-port: with --api-server-host; default 6443. */
  apiServerPort?: number;
  /** --pushgateway (the CLI checks the URL): each Job's `run --pushgateway`. */
  pushgateway?: string;
  /** --watch-for in milliseconds (the CLI parses the duration): each Job's `run --watch-for`. */
  watchForMs?: number;
  /** --admission-policy (commander checks the choice): deny, warn or none; default deny. */
  admissionPolicy?: AdmissionMode;
}

const DEFAULT_API_SERVER_PORT = 6443;

export async function manifestsCommand(options: ManifestsCommandOptions, ctx: CommandContext): Promise<void> {
  const manifests = buildManifests(manifestOptionsFrom(options));
  if (ctx.globals.output === 'json') {
    ctx.stdout.write(`${JSON.stringify(manifestsAsList(manifests), null, 2)}\n`);
  } else {
    ctx.stdout.write(renderManifestsYaml(manifests, manifestsHeader(VERSION)));
  }
}

/** Checks every flag and reports the first problem naming its flag; builds the core options. */
export function manifestOptionsFrom(options: ManifestsCommandOptions): ManifestOptions {
  const scheduleProblem = cronScheduleProblem(options.schedule);
  if (scheduleProblem !== undefined) {
    throw new UsageError(`--schedule "${options.schedule}": ${scheduleProblem}`, {
      hint: 'give five cron fields, minute hour day-of-month month day-of-week, e.g. --schedule "*/2 * * * *"',
    });
  }
  if (options.image !== undefined && !/^[^\s]+$/.test(options.image)) {
    throw new UsageError(`--image "${options.image}" is not an image reference`, {
      hint: 'e.g. --image registry.example.com/cloudscale-ccm:0.1.0',
    });
  }
  if (options.apiServerPort !== undefined && options.apiServerHost === undefined) {
    throw new UsageError('--api-server-port needs --api-server-host', {
      hint: 'add --api-server-host with an address the API server certificate names',
    });
  }
  if (options.watchForMs !== undefined && (options.watchForMs % 1000 !== 0 || options.watchForMs >= 3_600_000)) {
    throw new UsageError(`--watch-for takes whole seconds under an hour, got ${options.watchForMs / 1000} s`, {
      hint: 'e.g. --watch-for 50s with the default one-minute schedule; 0 runs one pass per Job',
    });
  }
  const port = options.apiServerPort ?? DEFAULT_API_SERVER_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UsageError(`--api-server-port takes 1–65535, got ${port}`);
  }
  if (options.apiServerHost !== undefined && !isHost(options.apiServerHost)) {
    throw new UsageError(`--api-server-host "${options.apiServerHost}" is neither an IP address nor a DNS name`, {
      hint: 'give the host only, without scheme or port, e.g. --api-server-host 10.0.0.10',
    });
  }
  return {
    version: VERSION,
    schedule: options.schedule.trim(),
    ...(options.maxDowntime === undefined ? {} : { maxDowntime: formatSeconds(options.maxDowntime) }),
    ...(options.window === undefined ? {} : { window: options.window.text }),
    ...(options.pushgateway === undefined ? {} : { pushgateway: options.pushgateway }),
    ...(options.watchForMs === undefined ? {} : { watchForSeconds: options.watchForMs / 1000 }),
    ...(options.image === undefined ? {} : { image: options.image }),
    ...(options.apiServerHost === undefined ? {} : { apiServer: { host: options.apiServerHost, port } }),
    ...(options.admissionPolicy === undefined ? {} : { admissionPolicy: options.admissionPolicy }),
  };
}

function isHost(value: string): boolean {
  if (isIP(value) !== 0) return true;
  return (
    value.length <= 253 &&
    value.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(label))
  );
}
