import type { V1Service } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { ConfigError } from '../core/errors.js';

/**
 * The Services of a manifest file (`-` reads standard input): one or several YAML or JSON
 * documents, each a v1 Service or a v1 List of Services. Anything else is an error naming the
 * file and the document, so a pull-request check fails loudly instead of planning nothing.
 */
export async function readServiceManifests(
  file: string,
  defaultNamespace: string,
  readStdin: () => Promise<string>,
): Promise<V1Service[]> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read manifest ${file}: ${(error as Error).message}`, {
      cause: error,
      hint: 'check the path given to -f (--filename); use -f - to read the manifest from standard input',
    });
  }
  return parseServiceManifests(text, file === '-' ? 'standard input' : file, defaultNamespace);
}

export function parseServiceManifests(text: string, source: string, defaultNamespace: string): V1Service[] {
  const services: V1Service[] = [];
  const seen = new Map<string, string>();
  parseAllDocuments(text).forEach((document, index) => {
    const where = `${source}: document ${index + 1}`;
    if (document.errors.length > 0) {
      throw new ConfigError(`${where}: ${document.errors[0]!.message}`, { hint: 'fix the YAML syntax' });
    }
    const value: unknown = document.toJS();
    if (value === null || value === undefined) return;
    const items = isObject(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    items.forEach((item: unknown, itemIndex: number) => {
      const at = items.length > 1 || value !== item ? `${where}, item ${itemIndex + 1}` : where;
      const service = asService(item, at, defaultNamespace);
      // Two proposals for one Service cannot both be planned: which one would be applied?
      const key = `${service.metadata!.namespace}/${service.metadata!.name}`;
      const first = seen.get(key);
      if (first !== undefined) {
        throw new ConfigError(`${at}: Service ${key} is already defined in ${first}`, {
          hint: 'give each Service once per manifest',
        });
      }
      seen.set(key, at);
      services.push(service);
    });
  });
  if (services.length === 0) {
    throw new ConfigError(`${source} contains no Service`, { hint: 'pass a manifest with at least one kind: Service document' });
  }
  return services;
}

function asService(value: unknown, where: string, defaultNamespace: string): V1Service {
  if (!isObject(value) || value.kind !== 'Service' || value.apiVersion !== 'v1') {
    const kind = isObject(value)
      ? `${typeof value.apiVersion === 'string' ? value.apiVersion : '(no apiVersion)'}/${typeof value.kind === 'string' ? value.kind : '(no kind)'}`
      : typeof value;
    throw new ConfigError(`${where}: is ${kind}, not a v1 Service`, {
      hint: 'plan -f takes Service manifests only (apiVersion: v1, kind: Service)',
    });
  }
  const metadata = isObject(value.metadata) ? value.metadata : {};
  if (typeof metadata.name !== 'string' || metadata.name === '') {
    throw new ConfigError(`${where}: the Service has no metadata.name`, { hint: 'give the Service a name' });
  }
  return {
    ...(value as V1Service),
    metadata: { ...metadata, namespace: typeof metadata.namespace === 'string' ? metadata.namespace : defaultNamespace },
  } as V1Service;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
