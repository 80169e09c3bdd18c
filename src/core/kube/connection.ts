// The one place that knows how to reach the Kubernetes API: kubeconfig loading and the mapping
// of client-node's ApiException into KubeApiError. Other modules in src/core/kube build on it.
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  EventsV1Api,
  KubeConfig,
  type Cluster,
  VersionApi,
} from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { ConfigError, KubeApiError } from '../errors.js';
import { ExecCredentials, resolveExecTimeoutMs } from './exec-credential.js';
import { tlsFailureOf, type TlsFailure } from '../tls.js';
import type { WriteFence } from '../fence.js';

export interface KubeConnectionOptions {
  /** --kubeconfig; otherwise KUBECONFIG, ~/.kube/config, then in-cluster service account. */
  kubeconfig?: string;
  /** --context; must exist in the kubeconfig. */
  context?: string;
  env?: NodeJS.ProcessEnv;
  /** Asked before every write kubeWrite sends; see src/core/fence.ts. */
  fence?: WriteFence;
}

export interface KubeConnection {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly coordination: CoordinationV1Api;
  readonly events: EventsV1Api;
  readonly version: VersionApi;
  /** Where the configuration came from, for messages (never contains credentials). */
  readonly source: string;
  /**
   * The namespace of the current context (in a Pod: the service account's), `default` when it
   * names none: what -n means when it is not given, as for kubectl.
   */
  readonly namespace: string;
  /** What the user should know about the configuration (TLS verification off); printed once. */
  readonly warnings: readonly string[];
  /** Asked before every write (kubeWrite); absent for connections that never write under a Lease. */
  readonly fence?: WriteFence;
}

/** Loads the configuration the way kubectl does and builds the API clients. */
export function connectKube(options: KubeConnectionOptions = {}): KubeConnection {
  const env = options.env ?? process.env;
  const config = new KubeConfig();
  const source =
    options.kubeconfig !== undefined
      ? options.kubeconfig
      : env.KUBECONFIG
        ? `KUBECONFIG=${env.KUBECONFIG}`
        : env.KUBERNETES_SERVICE_HOST
          ? 'in-cluster service account'
          : '~/.kube/config';
  try {
    if (options.kubeconfig !== undefined) {
      if (!existsSync(options.kubeconfig)) {
        throw new ConfigError(`kubeconfig ${options.kubeconfig} does not exist`, {
          hint: 'pass an existing file with --kubeconfig, or unset it to use KUBECONFIG',
        });
      }
      config.loadFromFile(options.kubeconfig);
    } else if (env.KUBECONFIG) {
      config.loadFromDefault();
    } else if (env.KUBERNETES_SERVICE_HOST) {
      config.loadFromCluster();
    } else {
      config.loadFromDefault();
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    // The YAML parser quotes the lines around the error: in a kubeconfig they hold credentials.
    // Only its first line (what and where: "bad indentation (5:4)") is shown, and the parser's
    // error is not kept as the cause (-v would print it whole).
    const reason = messageOf(error).split('\n', 1)[0]!.trim();
    throw new ConfigError(`cannot load the Kubernetes configuration from ${source}: ${reason}`, {
      hint: 'check the file (kubectl config view) or pass another with --kubeconfig',
    });
  }
  if (options.context !== undefined) {
    if (!config.getContexts().some((c) => c.name === options.context)) {
      const known = config.getContexts().map((c) => c.name);
      throw new ConfigError(`context "${options.context}" is not in ${source}`, {
        hint: `use one of: ${known.join(', ') || '(none)'}`,
      });
    }
    config.setCurrentContext(options.context);
  }
  if (config.getCurrentCluster() === null) {
    throw new ConfigError(`no Kubernetes cluster configured (${source})`, {
      hint: 'pass --kubeconfig or set KUBECONFIG',
    });
  }
  const cluster = config.getCurrentCluster();
  const warnings =
    cluster?.skipTLSVerify === true
      ? [
          `the kubeconfig (${source}) sets insecure-skip-tls-verify for cluster ${cluster.name}: ` +
            "the API server's identity is not checked, so its credentials can be intercepted; " +
            'set certificate-authority(-data) instead',
        ]
      : [];
  shareConnections(config);
  runExecPlugins(config, resolveExecTimeoutMs(env));
  return {
    config,
    warnings,
    core: config.makeApiClient(CoreV1Api),
    coordination: config.makeApiClient(CoordinationV1Api),
    events: config.makeApiClient(EventsV1Api),
    version: config.makeApiClient(VersionApi),
    source,
    namespace: config.getContextObject(config.getCurrentContext())?.namespace || 'default',
    ...(options.fence === undefined ? {} : { fence: options.fence }),
  };
}

/**
 * Exec credential plugins run by ExecCredentials (exec-credential.ts: a timeout, and errors with
 * the plugin's stderr), not client-node's ExecAuth: it is put first among the authenticators,
 * of which client-node uses the first that claims the user.
 */
function runExecPlugins(config: KubeConfig, timeoutMs: number): void {
  const target = config as unknown as { authenticators: unknown[] };
  target.authenticators = [new ExecCredentials(timeoutMs), ...target.authenticators];
}

/**
 * client-node 2.0 gives every request an undici Agent of its own, so every call opens a TLS
 * connection of its own and leaves it open until it idles out: a pass over 1,000 Services held
 * some 370 at once, with their TLS and HTTP/2 buffers outside the JS heap. Requests with the
 * same cluster and TLS options (those of the kubeconfig; an exec plugin may rotate the client
 * certificate) share one Agent and its connections instead.
 */
function shareConnections(config: KubeConfig): void {
  type CreateDispatcher = (cluster: Cluster | null, options: Record<string, unknown>) => unknown;
  const target = config as unknown as { createDispatcher: CreateDispatcher };
  const create = target.createDispatcher.bind(config);
  const shared = new Map<string, unknown>();
  target.createDispatcher = (cluster, options) => {
    const tls = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'].map((name) => String(options[name] ?? ''));
    const key = [cluster?.name, cluster?.server, cluster?.proxyUrl, ...tls].join('\0');
    if (!shared.has(key)) shared.set(key, create(cluster, options));
    return shared.get(key);
  };
}

/**
 * Runs one Kubernetes API call and maps its failure into KubeApiError with `what` as context
 * (e.g. "patch node worker-1"). Errors that are not HTTP answers (connection refused, TLS)
 * become KubeApiError with status 0.
 */
export async function kubeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toKubeApiError(what, error);
  }
}

/**
 * kubeCall for a write (create, patch, delete of anything but the Lease): the connection's fence
 * is asked first, outside the mapping, so a LeaseLostError reaches the caller as it is and the
 * request is never sent.
 */
export async function kubeWrite<T>(conn: KubeConnection, what: string, call: () => Promise<T>): Promise<T> {
  conn.fence?.check(what);
  return kubeCall(what, call);
}

export function toKubeApiError(what: string, error: unknown): KubeApiError {
  if (error instanceof KubeApiError) return error;
  if (error instanceof ApiException) {
    const status = parseStatusBody(error.body);
    const detail = status?.message ?? `HTTP ${error.code}`;
    const hint =
      error.code === 401
        ? 'the API server did not accept the credentials: check --kubeconfig, --context, KUBECONFIG'
        : error.code === 403
          ? 'this identity lacks a permission the tool needs: bind it to the role `cloudscale-ccm manifests` prints (docs/deploy.md lists every rule)'
          : undefined;
    return new KubeApiError(`${what}: ${detail}`, {
      status: error.code,
      ...(status?.reason === undefined ? {} : { reason: status.reason }),
      ...(hint === undefined ? {} : { hint }),
      cause: error,
    });
  }
  // No answer at all (connection refused, TLS, DNS): fetch says only "fetch failed"; the
  // reason with the address is in its cause.
  const tls = tlsFailureOf(error);
  if (tls !== undefined) {
    return new KubeApiError(`${what}: TLS handshake with the Kubernetes API server failed: ${tls.reason}`, {
      status: 0,
      cause: error,
      hint: KUBE_TLS_HINTS[tls.check],
    });
  }
  const reason = [messageOf(error), ...causesOf(error)].join(': ');
  return new KubeApiError(`${what}: ${reason}`, {
    status: 0,
    cause: error,
    hint: 'check that the Kubernetes API server is reachable: --kubeconfig, --context, KUBECONFIG',
  });
}

/** What to check in the kubeconfig when the TLS handshake failed, by kind of failure. */
const KUBE_TLS_HINTS: Record<TlsFailure['check'], string> = {
  trust:
    "the kubeconfig's certificate-authority(-data) of the cluster must be the CA that signed the API server's " +
    'certificate (kubectl config view --raw; --kubeconfig, --context, KUBECONFIG)',
  name: "the kubeconfig's server address must be a name or IP the API server's certificate is for (or set tls-server-name)",
  validity: "renew the API server's certificate, or check this machine's clock",
  protocol: "check the kubeconfig's server URL: https:// and the API server's secure port",
  other: "check the kubeconfig's server URL and its TLS settings",
};

function causesOf(error: unknown): string[] {
  const out: string[] = [];
  let cause = error instanceof Error ? error.cause : undefined;
  while (cause !== undefined && out.length < 3) {
    out.push(messageOf(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return out;
}

function parseStatusBody(body: unknown): { message?: string; reason?: string } | undefined {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return body.trim() === '' ? undefined : { message: body.slice(0, 300) };
    }
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  return {
    ...(typeof record.message === 'string' ? { message: record.message } : {}),
    ...(typeof record.reason === 'string' ? { reason: record.reason } : {}),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
