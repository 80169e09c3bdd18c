import { stringify } from 'yaml';
import { DOCUMENT_API_VERSION } from '../document-version.js';

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

/**
 * A document as plain YAML, the way kubectl and helm print it: an object that occurs twice (the
 * planner shares one frozen downtime between actions of a class) is written out twice, never as
 * an anchor (`&a1`) and alias (`*a1`) pair.
 */
export function plainYaml(document: unknown): string {
  return stringify(document, { aliasDuplicateObjects: false });
}
