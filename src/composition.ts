// The composition root: builds the Kubernetes connection and the cloudscale client once per
// invocation, lazily, from flags, environment and (for the token) the Go CCM's Secret.
// Only what a command uses is loaded: the Kubernetes client (client-node, about a thousand
// modules) when the command talks to the cluster, the cloudscale client (ky) on first use.
import type { CliIo, CommandContext, GlobalOptions } from './commands/context.js';
import type { CloudscaleClient } from './core/cloudscale/client.js';
import type { KubeConnection } from './core/kube/connection.js';
import { ConfigError, InternalError, KubeApiError } from './core/errors.js';
import { createWriteFence } from './core/fence.js';

/** The Secret the Go CCM reads its token from; reused so a switch-over needs no new Secret. */
export const TOKEN_SECRET = { namespace: 'kube-system', name: 'cloudscale', key: 'access-token' } as const;

/** The token from the Go CCM's Secret, checked like the other sources so errors name the Secret. */
async function tokenFromSecret(kube: KubeConnection): Promise<string> {
  const { namespace, name, key } = TOKEN_SECRET;
  const { readSecretValue } = await import('./core/kube/cluster.js');
  const { checkedToken } = await import('./core/cloudscale/settings.js');
  let value: string | undefined;
  try {
    value = await readSecretValue(kube, namespace, name, key);
  } catch (error) {
    // The role `manifests` prints grants no Secret access on purpose (the kubelet hands the
    // CronJob the token): pointing at it would not help.
    if (!(error instanceof KubeApiError) || error.status !== 403) throw error;
    throw new ConfigError(`no cloudscale API token: CLOUDSCALE_API_TOKEN is not set, and ${error.message}`, {
      cause: error,
      hint:
        `set CLOUDSCALE_API_TOKEN or pass --token-file; reading the Secret ${namespace}/${name} needs "get" on it, ` +
        'which the role of `cloudscale-ccm manifests` does not grant (the CronJob gets the token from the kubelet)',
    });
  }
  const token = value?.trim();
  if (token === undefined || token === '') {
    throw new ConfigError('no cloudscale API token found', {
      hint: `set CLOUDSCALE_API_TOKEN, pass --token-file, or create the Secret ${namespace}/${name} with key ${key}`,
    });
  }
  return checkedToken(token, `the Secret ${namespace}/${name} (key ${key})`);
}

/** What a command uses besides its own modules; decides what is loaded before it runs. */
export interface CommandUses {
  /** The command talks to the Kubernetes API (ctx.kube(), ctx.clusterId(), the token Secret). */
  cluster: boolean;
}

export async function createCommandContext(
  globals: GlobalOptions,
  io: CliIo,
  uses: CommandUses = { cluster: true },
): Promise<CommandContext> {
  // kube() hands out the connection synchronously, so its module is loaded up front.
  const connection = uses.cluster ? await import('./core/kube/connection.js') : undefined;
  let kube: KubeConnection | undefined;
  let cloudscale: Promise<CloudscaleClient> | undefined;
  const writeFence = createWriteFence();
  let clusterId: Promise<string> | undefined;
  let kubeSystemUid: Promise<string> | undefined;

  const context: CommandContext = {
    globals,
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    signal: io.signal,
    writeFence,
    kube() {
      if (connection === undefined) {
        throw new InternalError('this command was declared not to talk to the cluster (createCommandContext uses.cluster)');
      }
      if (kube === undefined) {
        kube = connection.connectKube({
          ...(globals.kubeconfig === undefined ? {} : { kubeconfig: globals.kubeconfig }),
          ...(globals.context === undefined ? {} : { context: globals.context }),
          env: io.env,
          fence: writeFence,
        });
        for (const warning of kube.warnings) io.stderr.write(`warning: ${warning}\n`);
      }
      return kube;
    },
    cloudscale() {
      cloudscale ??= (async () => {
        const { resolveApiTimeoutMs, resolveApiUrl, resolveCloudscaleToken } = await import('./core/cloudscale/token.js');
        const baseUrl = resolveApiUrl({ flag: globals.apiUrl, env: io.env });
        const timeoutMs = resolveApiTimeoutMs(io.env);
        const fromFlagOrEnv = await resolveCloudscaleToken({ tokenFile: globals.tokenFile, env: io.env });
        const token = fromFlagOrEnv?.token ?? (await tokenFromSecret(context.kube()));
        const { createCloudscaleClient } = await import('./core/cloudscale/client.js');
        return createCloudscaleClient({ baseUrl, token, timeoutMs, signal: io.signal, fence: writeFence });
      })();
      return cloudscale;
    },
    interactive: io.stdin.isTTY === true && io.stdout.isTTY === true,
    async confirm(question) {
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: io.stdin, output: io.stdout });
      try {
        const answer = await rl.question(question, { signal: io.signal });
        return /^y(es)?$/i.test(answer.trim());
      } finally {
        rl.close();
      }
    },
    async readStdin(maxBytes) {
      const chunks: Buffer[] = [];
      let length = 0;
      for await (const chunk of io.stdin) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
        length += buffer.length;
        // Stops reading at the limit instead of holding whatever is piped in.
        if (length > maxBytes) throw (await import('./commands/service-manifests.js')).manifestTooLarge('standard input', maxBytes);
        chunks.push(buffer);
      }
      return Buffer.concat(chunks);
    },
    clusterId() {
      clusterId ??= globals.clusterId !== undefined ? Promise.resolve(globals.clusterId) : context.kubeSystemUid();
      return clusterId;
    },
    kubeSystemUid() {
      kubeSystemUid ??= readKubeSystemUid(context.kube());
      return kubeSystemUid;
    },
  };
  return context;
}

/** The default cluster identity: the uid of namespace kube-system. */
async function readKubeSystemUid(kube: KubeConnection): Promise<string> {
  const { namespaceUid } = await import('./core/kube/cluster.js');
  return namespaceUid(kube, 'kube-system');
}
