// The status ConfigMap kube-system/cloudscale-ccm-status: one data key per command kind (`run`,
// `sync-lb`, `init-nodes`, `cleanup`), each holding that command's last PassRecord as JSON.
//
// Each command writes its own key by server-side apply with a field manager of its own, so
// writers of different commands never overwrite each other's records and no resourceVersion
// race can drop one. Writers of the same command are serialised by the writers' Lease, and the
// write passes the Lease's fence (kubeWrite) like every other write of a pass.
//
// RBAC cannot restrict `create` by name, so the role does not grant it: the ConfigMap is part of
// the manifests, and the role may only get and patch it by name. A pass that finds it missing
// creates it if its identity may (an administrator's kubeconfig), else warns.
import { PatchStrategy, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { CCM_NAMESPACE, STATUS_CONFIGMAP_NAME } from '../deploy/manifests.js';
import { KubeApiError } from '../errors.js';
import { PASS_COMMANDS, type PassCommand, type PassRecord } from '../status/record.js';
import { parsePassRecord } from '../status/record-parse.js';
import { kubeCall, kubeWrite, type KubeConnection } from './connection.js';

export const STATUS_CONFIGMAP = { namespace: CCM_NAMESPACE, name: STATUS_CONFIGMAP_NAME } as const;
const FIELD_MANAGER_PREFIX = 'cloudscale-ccm-status-';
const WHERE = `configmap ${CCM_NAMESPACE}/${STATUS_CONFIGMAP_NAME}`;

export interface StatusRead {
  /** False when the ConfigMap does not exist. */
  readonly exists: boolean;
  readonly records: Partial<Record<PassCommand, PassRecord>>;
  /** Keys whose content is not a record (edited by hand, another tool): said, not hidden. */
  readonly unreadable: readonly { readonly key: string; readonly reason: string }[];
}

/** Reads every record; a missing ConfigMap reads as no records. */
export async function readStatus(conn: KubeConnection): Promise<StatusRead> {
  let configMap: V1ConfigMap;
  try {
    configMap = await kubeCall(`read ${WHERE}`, () => conn.core.readNamespacedConfigMap(STATUS_CONFIGMAP));
  } catch (error) {
    if (error instanceof KubeApiError && error.isNotFound) return { exists: false, records: {}, unreadable: [] };
    throw error;
  }
  const records: Partial<Record<PassCommand, PassRecord>> = {};
  const unreadable: { key: string; reason: string }[] = [];
  for (const command of PASS_COMMANDS) {
    const text = configMap.data?.[command];
    if (text === undefined) continue;
    const parsed = parsePassRecord(text, command);
    if (typeof parsed === 'string') unreadable.push({ key: command, reason: parsed });
    else records[command] = parsed;
  }
  return { exists: true, records, unreadable };
}

/**
 * Writes `record` under its command's key, leaving the other keys as they are. Throws the
 * KubeApiError (or the fence's LeaseLostError) when it could not.
 */
export async function writeStatusRecord(conn: KubeConnection, record: PassRecord, exists: boolean): Promise<void> {
  const body: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { ...STATUS_CONFIGMAP, labels: { 'app.kubernetes.io/name': 'cloudscale-ccm' } },
    data: { [record.command]: JSON.stringify(record) },
  };
  try {
    await kubeWrite(conn, `write the ${record.command} record to ${WHERE}`, () =>
      conn.core.patchNamespacedConfigMap(
        { ...STATUS_CONFIGMAP, body, fieldManager: `${FIELD_MANAGER_PREFIX}${record.command}`, force: true },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      ),
    );
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 403 && !exists) {
      throw new KubeApiError(`${WHERE} does not exist and this identity may not create it`, {
        status: 403,
        cause: error,
        hint: 'apply the output of `cloudscale-ccm manifests` again: it creates the ConfigMap the role may only update',
      });
    }
    throw error;
  }
}
