// One GET against the API server with the kubeconfig's own credentials, over node:https, for
// the completion path: a Tab must not wait for @kubernetes/client-node to load (about 250 ms,
// docs/benchmarks.md "Completion"). This module must never import it.
//
// It serves the plain kubeconfigs only: one file, a client certificate, a bearer token (inline
// or as a file) or basic auth, a CA (inline or as a file) or insecure-skip-tls-verify. For the
// rest (exec and auth-provider plugins, proxies, several files in KUBECONFIG, no kubeconfig at
// all, as in a Pod) directCredentials answers undefined and the caller uses the full client.
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError, KubeApiError } from '../errors.js';

export interface DirectCredentials {
  readonly server: URL;
  /** The context's namespace, `default` when it names none (kubectl's default for -n). */
  readonly namespace: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly authorization?: string;
  readonly insecure: boolean;
  readonly servername?: string;
}

// node:fs, node:http and node:https come from process.getBuiltinModule, not `import`: an ES
// import of a built-in evaluates all its lazy exports (node:http's load Node's bundled undici,
// about 50 ms, half a Tab's budget; node:fs's its streams); the module itself does not.
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');

type Entry = Record<string, unknown>;

/** User fields only the full client implements: credential plugins and impersonation. */
const LEFT_TO_THE_CLIENT = ['exec', 'auth-provider', 'as', 'as-groups', 'as-uid', 'as-user-extra'];

/**
 * The credentials of `context` (default: the current context) in the kubeconfig the full client
 * would read (`kubeconfig`, else KUBECONFIG, else ~/.kube/config), or undefined when only the
 * full client can serve it.
 */
export function directCredentials(options: {
  kubeconfig?: string;
  context?: string;
  env: NodeJS.ProcessEnv;
}): DirectCredentials | undefined {
  const file = kubeconfigFile(options.kubeconfig, options.env);
  if (file === undefined || !existsSync(file)) return undefined;
  const config = parseYaml(readFileSync(file, 'utf8')) as Entry | null;
  if (config === null || typeof config !== 'object') return undefined;
  const contextName = options.context ?? stringOf(config['current-context']);
  const context = named(config.contexts, 'context', contextName);
  if (context === undefined) return undefined;
  const cluster = named(config.clusters, 'cluster', stringOf(context.cluster));
  const user = stringOf(context.user) === undefined ? {} : named(config.users, 'user', stringOf(context.user));
  const server = stringOf(cluster?.server);
  if (cluster === undefined || user === undefined || server === undefined) return undefined;
  if (LEFT_TO_THE_CLIENT.some((key) => key in user) || 'proxy-url' in cluster) {
    return undefined;
  }
  const base = dirname(file);
  const bytes = (entry: Entry, field: string): Buffer | undefined => {
    const data = stringOf(entry[`${field}-data`]);
    if (data !== undefined) return Buffer.from(data, 'base64');
    const path = stringOf(entry[field]);
    return path === undefined ? undefined : readFileSync(isAbsolute(path) ? path : join(base, path));
  };
  const token = stringOf(user.token) ?? (stringOf(user.tokenFile) === undefined ? undefined : bytes(user, 'tokenFile')?.toString('utf8').trim());
  const username = stringOf(user.username);
  const authorization =
    token !== undefined
      ? `Bearer ${token}`
      : username === undefined
        ? undefined
        : `Basic ${Buffer.from(`${username}:${stringOf(user.password) ?? ''}`).toString('base64')}`;
  const ca = bytes(cluster, 'certificate-authority');
  const cert = bytes(user, 'client-certificate');
  const key = bytes(user, 'client-key');
  const servername = stringOf(cluster['tls-server-name']);
  return {
    server: new URL(server),
    namespace: stringOf(context.namespace) || 'default',
    insecure: cluster['insecure-skip-tls-verify'] === true,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(authorization === undefined ? {} : { authorization }),
    ...(servername === undefined ? {} : { servername }),
  };
}

/**
 * GET `path` (below the server URL, which may carry a path prefix) as JSON. Rejects with a
 * KubeApiError on an error status and with a ConfigError when the server does not answer
 * within `timeoutMs`.
 */
export function directGetJson(credentials: DirectCredentials, path: string, timeoutMs: number): Promise<unknown> {
  const url = new URL(credentials.server.pathname.replace(/\/$/, '') + path, credentials.server);
  const { request } = url.protocol === 'http:' ? process.getBuiltinModule('node:http') : process.getBuiltinModule('node:https');
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        headers: {
          accept: 'application/json',
          ...(credentials.authorization === undefined ? {} : { authorization: credentials.authorization }),
        },
        ...(credentials.ca === undefined ? {} : { ca: credentials.ca }),
        ...(credentials.cert === undefined ? {} : { cert: credentials.cert }),
        ...(credentials.key === undefined ? {} : { key: credentials.key }),
        ...(credentials.servername === undefined ? {} : { servername: credentials.servername }),
        rejectUnauthorized: !credentials.insecure,
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status > 299) {
            reject(new KubeApiError(`GET ${path} answered ${status}`, { status }));
            return;
          }
          try {
            resolve(JSON.parse(body));
          } catch (error) {
            reject(new KubeApiError(`GET ${path} answered ${status} with a body that is not JSON`, { status, cause: error }));
          }
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new ConfigError(`${url.origin} did not answer GET ${path} within ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end();
  });
}

function kubeconfigFile(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag !== undefined) return flag;
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((path) => path !== '');
  // Several files are merged by the full client; that is its job.
  if (fromEnv.length > 1) return undefined;
  return fromEnv[0] ?? join(env.HOME ?? homedir(), '.kube', 'config');
}

/** The `field` of the entry named `name` in a kubeconfig list (contexts, clusters, users). */
function named(list: unknown, field: string, name: string | undefined): Entry | undefined {
  if (name === undefined || !Array.isArray(list)) return undefined;
  const entry = (list as Entry[]).find((item) => item?.name === name)?.[field];
  return entry !== null && typeof entry === 'object' ? (entry as Entry) : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
