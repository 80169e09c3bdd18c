// What every command receives from the composition root (src/cli.ts). Commands are thin:
// options → core → render; they return a result or throw, and never touch `process`.
import type { CloudscaleClient } from '../core/cloudscale/client.js';
import type { KubeConnection } from '../core/kube/connection.js';
import type { LeaseHandle } from '../core/kube/lease.js';
import type { ArmableFence } from '../core/fence.js';

/** `markdown` is for `plan` only: the command line refuses it for every other command. */
export type OutputFormat = 'text' | 'json' | 'yaml' | 'markdown';

export interface GlobalOptions {
  kubeconfig?: string;
  context?: string;
  output: OutputFormat;
  /** False with --no-color, NO_COLOR, or when stdout is not a terminal. */
  color: boolean;
  apiUrl?: string;
  tokenFile?: string;
  /** Overrides the cluster identity (default: uid of the kube-system namespace). */
  clusterId?: string;
  verbose: boolean;
}

/** The process's streams, environment and abort signal, as bin/ hands them to the CLI. */
export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

export interface OutputStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface CommandContext {
  readonly globals: GlobalOptions;
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM: commands stop between steps and report what they did. */
  readonly signal: AbortSignal;
  /** The Kubernetes connection, created on first use. */
  kube(): KubeConnection;
  /** The cloudscale client, created on first use (token from flag, env, or the Secret). */
  cloudscale(): Promise<CloudscaleClient>;
  /** This cluster's identity for ownership tags. */
  clusterId(): Promise<string>;
  /**
   * The uid of namespace kube-system: what clusterId defaults to, and the second ownership tag
   * that tells clusters apart when they share a cluster id (src/core/lb/cluster-identity.ts).
   */
  kubeSystemUid(): Promise<string>;
  /** All of standard input (for `-f -`); throws ConfigError past `maxBytes`. */
  readStdin(maxBytes: number): Promise<Buffer | string>;
  /** True when a person can answer a question (standard input and output are terminals). */
  readonly interactive: boolean;
  /** Asks a yes/no question on the terminal; only call when `interactive`. */
  confirm(question: string): Promise<boolean>;
  /** The writers' Lease, when this command runs inside a pass that holds it (a step of `run`). */
  readonly writerLease?: LeaseHandle;
  /**
   * The fence every write of kube() and cloudscale() passes (src/core/fence.ts); a writer arms
   * it with its Lease for as long as it holds it.
   */
  readonly writeFence: ArmableFence;
}

/**
 * Exit code a command asks for when it did not throw: 0 done, 1 the output already reports
 * errors, 2 changes pending (plan --detailed-exitcode).
 */
export interface CommandResult {
  exitCode: 0 | 1 | 2;
}
