// The composition root: builds the Kubernetes connection and the cloudscale client once per
// invocation, lazily, from flags, environment and (for the token) the Go CCM's Secret.
import { createInterface } from 'node:readline/promises';
import type { CliIo } from './cli.js';
import type { CommandContext, GlobalOptions } from './commands/context.js';
import { createCloudscaleClient, type CloudscaleClient } from './core/cloudscale/client.js';
import { checkedToken } from './core/cloudscale/settings.js';
import { resolveApiTimeoutMs, resolveApiUrl, resolveCloudscaleToken } from './core/cloudscale/token.js';
import { namespaceUid, readSecretValue } from './core/kube/cluster.js';
import { connectKube, type KubeConnection } from './core/kube/connection.js';
import { ConfigError } from './core/errors.js';

/** The Secret the Go CCM reads its token from; reused so a switch-over needs no new Secret. */
export const TOKEN_SECRET = { namespace: 'kube-system', name: 'cloudscale', key: 'access-token' } as const;

/** The token from the Go CCM's Secret, checked like the other sources so errors name the Secret. */
async function tokenFromSecret(kube: KubeConnection): Promise<string> {
  const { namespace, name, key } = TOKEN_SECRET;
  const token = (await readSecretValue(kube, namespace, name, key))?.trim();
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
      kube ??= connectKube({
        ...(globals.kubeconfig === undefined ? {} : { kubeconfig: globals.kubeconfig }),
        ...(globals.context === undefined ? {} : { context: globals.context }),
        env: io.env,
      });
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
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
      return Buffer.concat(chunks).toString('utf8');
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
