import type { V1Service } from '@kubernetes/client-node';
import { open } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { ConfigError } from '../core/errors.js';
import type { DefaultNamespace } from './service-args.js';

/**
 * The largest manifest `plan -f` reads. Parsing takes some 40 times the text in memory, and
 * every Service is sent to the API server for a dry run: a manifest of many megabytes is a
 * mistake (a log, a whole cluster dump), refused before any of that.
 */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** The most Services one manifest may propose (each is one dry-run request). */
export const MAX_MANIFEST_SERVICES = 1000;

const sizeHint =
  `plan -f reads at most ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB and ${MAX_MANIFEST_SERVICES} Services: ` +
  'pass only the Service manifests to check, or split them over several runs';

/**
 * The Services of a manifest file (`-` reads standard input): one or several YAML or JSON
 * documents, each a v1 Service or a v1 List of Services. Anything else is an error naming the
 * file and the document, so a pull-request check fails loudly instead of planning nothing.
 * Input over MAX_MANIFEST_BYTES, and input that is not text, is refused without being echoed.
 */
export async function readServiceManifests(
  file: string,
  defaultNamespace: DefaultNamespace,
  readStdin: (maxBytes: number) => Promise<Buffer | string>,
): Promise<V1Service[]> {
  const source = file === '-' ? 'standard input' : file;
  let bytes: Buffer | string;
  try {
    bytes = file === '-' ? await readStdin(MAX_MANIFEST_BYTES) : await readFileUpTo(file, MAX_MANIFEST_BYTES);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`cannot read manifest ${file}: ${(error as Error).message}`, {
      cause: error,
      hint: 'check the path given to -f (--filename); use -f - to read the manifest from standard input',
    });
  }
  return parseServiceManifests(manifestText(bytes, source), source, defaultNamespace);
}

/** The error for input over `maxBytes`; the reader of standard input throws it too. */
export function manifestTooLarge(source: string, maxBytes: number): ConfigError {
  return new ConfigError(`${source} is larger than ${maxBytes / 1024 / 1024} MiB, the limit for a manifest`, { hint: sizeHint });
}

async function readFileUpTo(file: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    // One byte more than allowed tells "at the limit" from "over it" without reading it all.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) throw manifestTooLarge(file, maxBytes);
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/**
 * The text of a manifest, refused (without echoing any of it) when it is not UTF-8 text:
 * binary data or control characters would otherwise end up in the error on a terminal.
 */
function manifestText(bytes: Buffer | string, source: string): string {
  const text = typeof bytes === 'string' ? bytes : new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const bad = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.exec(text);
  if (bad !== null) {
    const line = text.slice(0, bad.index).split('\n').length;
    throw new ConfigError(
      `${source} is not a text manifest: line ${line} holds a control character or bytes that are not UTF-8`,
      { hint: 'pass a YAML or JSON file of Service manifests (check that -f names the right file)' },
    );
  }
  return text;
}

export function parseServiceManifests(text: string, source: string, defaultNamespace: DefaultNamespace): V1Service[] {
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
      if (services.length > MAX_MANIFEST_SERVICES) {
        throw new ConfigError(`${source} holds more than ${MAX_MANIFEST_SERVICES} Services`, { hint: sizeHint });
      }
    });
  });
  if (services.length === 0) {
    throw new ConfigError(`${source} contains no Service`, { hint: 'pass a manifest with at least one kind: Service document' });
  }
  return services;
}

function asService(value: unknown, where: string, defaultNamespace: DefaultNamespace): V1Service {
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
    metadata: { ...metadata, namespace: typeof metadata.namespace === 'string' ? metadata.namespace : defaultNamespace() },
  } as V1Service;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
