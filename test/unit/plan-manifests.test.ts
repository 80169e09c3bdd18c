// Reading the manifests of `plan -f`: YAML or JSON, one or several documents, v1 Lists; every
// error names the file and the document (and the item of a List).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseServiceManifests, readServiceManifests } from '../../src/commands/service-manifests.js';
import { ConfigError } from '../../src/core/errors.js';

const svc = (name: string, namespace?: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}${namespace === undefined ? '' : `, namespace: ${namespace}`}}\nspec: {type: LoadBalancer}\n`;

describe('parseServiceManifests', () => {
  test.each<[string, string, string[]]>([
    ['one document', svc('web'), ['shop/web']],
    ['several documents, an explicit namespace kept', `${svc('web')}---\n${svc('api', 'other')}`, ['shop/web', 'other/api']],
    ['empty documents and a leading separator are skipped', `---\n${svc('web')}---\n---\n`, ['shop/web']],
    ['a v1 List', `apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n- {apiVersion: v1, kind: Service, metadata: {name: b}}\n`, ['shop/a', 'shop/b']],
    ['JSON', JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'x' } }), ['x/web']],
  ])('%s', (_name, text, expected) => {
    const services = parseServiceManifests(text, 'svc.yaml', () => 'shop');
    expect(services.map((s) => `${s.metadata!.namespace}/${s.metadata!.name}`)).toEqual(expected);
  });

  test('the manifest is kept as written, only the namespace is filled in', () => {
    const [service] = parseServiceManifests(`${svc('web')}`, 'svc.yaml', () => 'shop');
    expect(service).toEqual({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { type: 'LoadBalancer' } });
  });

  test.each<[string, string, string]>([
    ['a YAML syntax error', `${svc('web')}---\nmetadata: {name: x\n`, 'svc.yaml: document 2: '],
    ['another kind', `${svc('web')}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n`, 'svc.yaml: document 2: is apps/v1/Deployment, not a v1 Service'],
    ['another apiVersion', 'apiVersion: v2\nkind: Service\nmetadata: {name: web}\n', 'svc.yaml: document 1: is v2/Service, not a v1 Service'],
    ['a scalar document', 'just text\n', 'svc.yaml: document 1: is string, not a v1 Service'],
    ['no name', 'apiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n', 'svc.yaml: document 1: the Service has no metadata.name'],
    ['a bad List item', 'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n', 'svc.yaml: document 1, item 2: is v1/ConfigMap, not a v1 Service'],
    ['no Service at all', '---\n---\n', 'svc.yaml contains no Service'],
    ['one Service twice', `${svc('web')}---\n${svc('web', 'shop')}`, 'svc.yaml: document 2: Service shop/web is already defined in svc.yaml: document 1'],
  ])('%s → an error naming the file and the document', (_name, text, message) => {
    expect(() => parseServiceManifests(text, 'svc.yaml', () => 'shop')).toThrow(ConfigError);
    expect(() => parseServiceManifests(text, 'svc.yaml', () => 'shop')).toThrow(message);
  });

  test('every error has a hint', () => {
    try {
      parseServiceManifests('apiVersion: apps/v1\nkind: Deployment\n', 'svc.yaml', () => 'shop');
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).hint).toBe('plan -f takes Service manifests only (apiVersion: v1, kind: Service)');
    }
  });
});

describe('readServiceManifests', () => {
  test('a file, standard input for "-", and a missing file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccm-manifests-'));
    try {
      const file = join(dir, 'svc.yaml');
      await writeFile(file, svc('web'));
      expect((await readServiceManifests(file, () => 'shop', async () => '')).map((s) => s.metadata!.name)).toEqual(['web']);
      expect((await readServiceManifests('-', () => 'shop', async () => svc('api'))).map((s) => s.metadata!.name)).toEqual(['api']);
      await expect(readServiceManifests('-', () => 'shop', async () => 'kind: Pod\n')).rejects.toThrow('standard input: document 1: is (no apiVersion)/Pod, not a v1 Service');
      const missing = readServiceManifests(join(dir, 'missing.yaml'), () => 'shop', async () => '');
      await expect(missing).rejects.toThrow(`cannot read manifest ${join(dir, 'missing.yaml')}: ENOENT`);
      await expect(missing).rejects.toMatchObject({ hint: 'check the path given to -f (--filename); use -f - to read the manifest from standard input' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
