/** The group and version every machine-readable document of this tool carries. */
export const DOCUMENT_API_VERSION = 'cloudscale-ccm/v1';

/**
 * A command's result as a versioned document for `-o json|yaml`: `apiVersion` and `kind` say
 * what it is, `version` is bumped on any incompatible change of its fields.
 */
export function resultDocument<K extends string, T extends object>(
  kind: K,
  version: number,
  body: T,
): { apiVersion: typeof DOCUMENT_API_VERSION; kind: K; version: number } & T {
  return { apiVersion: DOCUMENT_API_VERSION, kind, version, ...body };
}
