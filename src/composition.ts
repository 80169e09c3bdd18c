// The composition root: builds the Kubernetes connection and the cloudscale client once per
// invocation, lazily, from flags, environment and (for the token) the Go CCM's Secret.
import { createInterface } from 'node:readline/promises';
import type { CliIo, CommandContext, GlobalOptions } from './commands/context.js';
import { createCloudscaleClient, type CloudscaleClient } from './core/cloudscale/client.js';
import { checkedToken } from './core/cloudscale/settings.js';
import { resolveApiTimeoutMs, resolveApiUrl, resolveCloudscaleToken } from './core/cloudscale/token.js';
import { namespaceUid, readSecretValue } from './core/kube/cluster.js';
import { connectKube, type KubeConnection } from './core/kube/connection.js';
import { ConfigError, KubeApiError } from './core/errors.js';
import { manifestTooLarge } from './commands/service-manifests.js';

/** The Secret the Go CCM reads its token from; reused so a switch-over needs no new Secret. */
export const TOKEN_SECRET = { namespace: 'kube-system', name: 'cloudscale', key: 'access-token' } as const;

/** The token from the Go CCM's Secret, checked like the other sources so errors name the Secret. */
async function tokenFromSecret(kube: KubeConnection): Promise<string> {
  const { namespace, name, key } = TOKEN_SECRET;
  let value: string | undefined;
  try {
    value = await readSecretValue(kube, namespace, name, key);
  } catch (error) {
    // The role `manifests` prints grants no Secret access on purpose (the kubelet hands the
    // CronJob the token): pointing at it would not help.
    if (!(error instanceof KubeApiError) || error.status !== 403) throw error;
    throw new ConfigError(`no cloudscale API token: CLOUDSCALE_API_TOKEN is not set and ${error.message}`, {
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

export function createCommandContext(globals: GlobalOptions, io: CliIo): CommandContext {
  let kube: KubeConnection | undefined;
  let cloudscale: Promise<CloudscaleClient> | undefined;
  let clusterId: Promise<string> | undefined;

  const context: CommandContext = {
    globals,
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    signal: io.signal,
    kube() {
      if (kube === undefined) {
        kube = connectKube({
          ...(globals.kubeconfig === undefined ? {} : { kubeconfig: globals.kubeconfig }),
          ...(globals.context === undefined ? {} : { context: globals.context }),
          env: io.env,
        });
        for (const warning of kube.warnings) io.stderr.write(`warning: ${warning}\n`);
      }
      return kube;
    },
    cloudscale() {
      cloudscale ??= (async () => {
        const baseUrl = resolveApiUrl({ flag: globals.apiUrl, env: io.env });
        const timeoutMs = resolveApiTimeoutMs(io.env);
        const fromFlagOrEnv = await resolveCloudscaleToken({ tokenFile: globals.tokenFile, env: io.env });
        const token = fromFlagOrEnv?.token ?? (await tokenFromSecret(context.kube()));
        return createCloudscaleClient({ baseUrl, token, timeoutMs, signal: io.signal });
      })();
      return cloudscale;
    },
    interactive: io.stdin.isTTY === true && io.stdout.isTTY === true,
    async confirm(question) {
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
        if (length > maxBytes) throw manifestTooLarge('standard input', maxBytes);
        chunks.push(buffer);
      }
      return Buffer.concat(chunks);
    },
    clusterId() {
      clusterId ??=
        globals.clusterId !== undefined
          ? Promise.resolve(globals.clusterId)
          : namespaceUid(context.kube(), 'kube-system');
      return clusterId;
    },
  };
  return context;
}
