// The kubeconfig's exec credential plugins (`users[].user.exec`: aws eks get-token, kubelogin,
// gke-gcloud-auth-plugin …), run here instead of by client-node's ExecAuth, which waits for a
// plugin without end and reports a failed one by its stderr alone (an empty message when it
// printed nothing). A plugin here gets EXEC_TIMEOUT_SECONDS (CLOUDSCALE_CCM_EXEC_TIMEOUT) to
// answer; every failure names the plugin, the kubeconfig user and what went wrong, with the
// plugin's stderr.
import { spawn } from 'node:child_process';
import type { User } from '@kubernetes/client-node';
import { ConfigError, KubeApiError, UsageError } from '../errors.js';
import { wholeNumberFrom } from '../option-values.js';

/** How long a plugin may take unless CLOUDSCALE_CCM_EXEC_TIMEOUT says otherwise. */
export const EXEC_TIMEOUT_SECONDS = 30;
const TIMEOUT_VARIABLE = 'CLOUDSCALE_CCM_EXEC_TIMEOUT';
/** The end of a plugin's stderr shown in an error: its last lines say what failed. */
const STDERR_SHOWN = 2000;

/** CLOUDSCALE_CCM_EXEC_TIMEOUT in whole seconds (≥ 1), as milliseconds; the default when unset or empty. */
export function resolveExecTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env[TIMEOUT_VARIABLE]?.trim();
  if (raw === undefined || raw === '') return EXEC_TIMEOUT_SECONDS * 1000;
  try {
    return wholeNumberFrom(TIMEOUT_VARIABLE, 1)(raw) * 1000;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    throw new ConfigError(error.message, { hint: `set it to the seconds a credential plugin may take, or unset it for ${EXEC_TIMEOUT_SECONDS}` });
  }
}

interface ExecConfig {
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value: string }[];
  readonly apiVersion?: string;
}

interface ExecCredential {
  readonly status?: {
    readonly token?: string;
    readonly clientCertificateData?: string;
    readonly clientKeyData?: string;
    readonly expirationTimestamp?: string;
  };
}

/**
 * An authenticator for KubeConfig (client-node asks the first whose isAuthProvider answers true):
 * one credential per user, kept until its expirationTimestamp; requests that ask at the same
 * time share one run of the plugin; a failed run is not kept, so a later request runs it again.
 */
export class ExecCredentials {
  private readonly credentials = new Map<string, { readonly credential: Promise<ExecCredential>; expiresMs?: number }>();

  /** The kubeconfig's source is added to the message by the command line (withApiServer). */
  constructor(private readonly timeoutMs: number) {}

  isAuthProvider(user: User): boolean {
    return user.exec !== undefined && user.exec !== null;
  }

  async applyAuthentication(user: User, opts: { headers?: Record<string, unknown>; cert?: unknown; key?: unknown }): Promise<void> {
    const { status } = await this.credential(user);
    if (status?.clientCertificateData !== undefined) opts.cert = status.clientCertificateData;
    if (status?.clientKeyData !== undefined) opts.key = status.clientKeyData;
    if (status?.token !== undefined) opts.headers = { ...opts.headers, Authorization: `Bearer ${status.token}` };
  }

  private credential(user: User): Promise<ExecCredential> {
    const cached = this.credentials.get(user.name);
    if (cached !== undefined && !(cached.expiresMs !== undefined && cached.expiresMs <= Date.now())) return cached.credential;
    const entry: { credential: Promise<ExecCredential>; expiresMs?: number } = { credential: this.run(user, user.exec as ExecConfig) };
    this.credentials.set(user.name, entry);
    entry.credential.then(
      (credential) => {
        const expires = credential.status?.expirationTimestamp;
        if (expires !== undefined) entry.expiresMs = Date.parse(expires);
      },
      () => this.credentials.delete(user.name),
    );
    return entry.credential;
  }

  private run(user: User, exec: ExecConfig): Promise<ExecCredential> {
    const plugin = `the exec credential plugin "${exec.command}" of user "${user.name}"`;
    const fail = (what: string, hint: string) =>
      new KubeApiError(`${plugin} ${what}`, { status: 0, hint: `${hint}; it is users[].user.exec in the kubeconfig (kubectl config view)` });
    if (typeof exec.command !== 'string' || exec.command === '') {
      return Promise.reject(fail('names no command', 'set exec.command'));
    }
    const env = { ...process.env };
    for (const { name, value } of exec.env ?? []) env[name] = value;
    // What kubectl tells a plugin: no one can answer a prompt here.
    env.KUBERNETES_EXEC_INFO = JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
    return new Promise((resolve, reject) => {
      const child = spawn(exec.command!, [...(exec.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const said = () => {
        const text = stderr.trim();
        if (text === '') return '(it printed nothing on stderr)';
        return `stderr: ${text.length > STDERR_SHOWN ? `…${text.slice(-STDERR_SHOWN)}` : text}`;
      };
      const timer = setTimeout(() => {
        // A plugin that waits (for a login, a network) must not hold the pass: it is killed, and
        // its pipes closed, since a child of it may still hold them open.
        child.kill('SIGKILL');
        child.stdout.destroy();
        child.stderr.destroy();
        reject(
          fail(
            `did not answer within ${this.timeoutMs / 1000} s; ${said()}`,
            `run the plugin yourself to see what it waits for (a login, the network); ${TIMEOUT_VARIABLE} sets the limit in seconds`,
          ),
        );
      }, this.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(fail(`could not be started: ${error.message}`, 'install the plugin or correct its command (a name on PATH or a path)'));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code !== 0) {
          const how = code === null ? `was ended by ${signal}` : `exited with code ${code}`;
          reject(fail(`${how}; ${said()}`, 'run the plugin yourself and fix what it says (often: log in again)'));
          return;
        }
        let credential: ExecCredential;
        try {
          credential = JSON.parse(stdout) as ExecCredential;
        } catch (error) {
          reject(fail(`printed no ExecCredential JSON (${(error as Error).message})`, 'run the plugin yourself: it must print an ExecCredential object'));
          return;
        }
        const status = credential?.status;
        if (typeof status !== 'object' || status === null || (status.token === undefined && status.clientCertificateData === undefined)) {
          reject(fail('printed an ExecCredential without status.token or status.clientCertificateData', 'run the plugin yourself: it must print a token or a client certificate'));
          return;
        }
        resolve(credential);
      });
    });
  }
}
