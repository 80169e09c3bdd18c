// Facts about the cluster itself: its identity, the server version, and Secret values.
import { ConfigError, KubeApiError } from '../errors.js';
import { kubeCall, type KubeConnection } from './connection.js';

/**
 * The uid of a namespace; `kube-system`'s uid is the default cluster identity (it lives as long
 * as the cluster and differs between clusters).
 */
export async function namespaceUid(conn: KubeConnection, namespace: string): Promise<string> {
  const ns = await kubeCall(`read namespace ${namespace}`, () => conn.core.readNamespace({ name: namespace }));
  const uid = ns.metadata?.uid;
  if (uid === undefined || uid === '') {
    throw new KubeApiError(`read namespace ${namespace}: the answer carries no uid`, { status: 0 });
  }
  return uid;
}

export interface ServerVersion {
  major: number;
  minor: number;
  /** As reported, e.g. v1.36.3 or v1.30.2-gke.1; '' if absent. */
  gitVersion: string;
}

/** The apiserver's version; minors like "30+" (managed distributions) count as 30. */
export async function serverVersion(conn: KubeConnection): Promise<ServerVersion> {
  const info = await kubeCall('read server version', () => conn.version.getCode());
  return parseServerVersion(info.major, info.minor, info.gitVersion);
}

export function parseServerVersion(major: string, minor: string, gitVersion = ''): ServerVersion {
  const majorNumber = leadingInteger(major);
  const minorNumber = leadingInteger(minor);
  if (majorNumber !== undefined && minorNumber !== undefined) {
    return { major: majorNumber, minor: minorNumber, gitVersion };
  }
  const fromGit = /^v?(\d+)\.(\d+)/.exec(gitVersion);
  if (fromGit?.[1] !== undefined && fromGit[2] !== undefined) {
    return { major: Number(fromGit[1]), minor: Number(fromGit[2]), gitVersion };
  }
  throw new KubeApiError(
    `cannot understand the server version (major "${major}", minor "${minor}", gitVersion "${gitVersion}")`,
    { status: 0 },
  );
}

function leadingInteger(text: string): number | undefined {
  const match = /^(\d+)/.exec(text.trim());
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * One value of a Secret, base64-decoded as UTF-8; undefined if the Secret or the key does not
 * exist. Surrounding whitespace (a trailing newline from `kubectl create secret --from-file`)
 * is removed.
 */
export async function readSecretValue(
  conn: KubeConnection,
  namespace: string,
  name: string,
  key: string,
): Promise<string | undefined> {
  let data: Record<string, string> | undefined;
  try {
    const secret = await kubeCall(`read secret ${namespace}/${name}`, () =>
      conn.core.readNamespacedSecret({ namespace, name }),
    );
    data = secret.data;
  } catch (error) {
    if (error instanceof KubeApiError && error.isNotFound) return undefined;
    throw error;
  }
  const encoded = data?.[key];
  if (encoded === undefined) return undefined;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
    throw new ConfigError(`secret ${namespace}/${name} key ${key} is not valid base64`, {
      hint: `recreate it: kubectl -n ${namespace} create secret generic ${name} --from-literal=${key}=...`,
    });
  }
  return Buffer.from(encoded, 'base64').toString('utf8').trim();
}
