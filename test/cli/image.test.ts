// The image of `npm run image` (scripts/build-image.js), built twice from one `npm pack` of the
// built tree: the same inputs give the same digest; its configuration is the final stage of deploy/Containerfile
// (what the CronJob end-to-end test runs) with the user of the CronJob's securityContext; its
// layers hold the Node runtime and the installed package; and, as root, its root filesystem runs
// `plan` read-only as UID 65532 under chroot against the test cluster and a simulator: the image's own
// Node binary and libraries, nothing of the host. crane (scripts/image-tools/build.sh) pushes
// the layout to a registry on loopback and reports the same digest.
//
// Not covered: a container engine's run of the image (none on these machines); the base image
// of the Containerfile build (node:24-bookworm-slim) differs from this one's runtime layer.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { TEST_TOKEN, nodesSeed, startHarness, type Harness } from '../support/ccm.js';
import { createNode, deleteCreatedObjects, testKubeconfig, uniqueName, UNINITIALIZED_TAINT_KEY } from '../support/kube.js';
import { containerSupport, imageFromContainerfile } from '../support/container-image.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const env = { ...process.env, PATH: [dirname(process.execPath), process.env.PATH].join(delimiter) };
/** Undefined where this machine can enter the image's root filesystem (root, unshare --mount). */
const noContainers = containerSupport();
if (noContainers !== undefined) console.warn(`image.test.ts: the run in the image's root filesystem is skipped: ${noContainers}`);

interface Descriptor {
  digest: string;
}
interface ImageConfig {
  architecture: string;
  os: string;
  config: { User: string; Env: string[]; Entrypoint: string[]; Cmd: string[]; WorkingDir: string };
  rootfs: { diff_ids: string[] };
}

let work: string;
let layout: string;
let digest: string;
let rootfs: string;

function buildImage(out: string, tarball: string): string {
  const args = [join(repo, 'scripts', 'build-image.js'), '--tarball', tarball, '--out', out, '--cache', join(work, 'cache')];
  const result = spawnSync(process.execPath, args, { cwd: repo, env, encoding: 'utf8', timeout: 300_000 });
  if (result.status !== 0) throw new Error(`scripts/build-image.js exited with ${result.status}:\n${result.stderr}`);
  return result.stdout.trim();
}

const blob = (descriptor: Descriptor): Buffer => readFileSync(join(layout, 'blobs', 'sha256', descriptor.digest.replace(/^sha256:/, '')));
function manifestOf(): { config: Descriptor; layers: Descriptor[] } {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  return JSON.parse(blob(index.manifests[0]!).toString()) as { config: Descriptor; layers: Descriptor[] };
}

beforeAll(() => {
  if (!existsSync(join(repo, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` before this test (npm test does)');
  work = mkdtempSync(join(tmpdir(), 'ccm-image-test-'));
  layout = join(work, 'first', 'oci');
  // One tarball for both builds: the shared working tree may change in between.
  const packed = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: repo, env, encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`npm pack exited with ${packed.status}:\n${packed.stderr}`);
  const tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  digest = buildImage(join(work, 'first'), tarball);
  const again = buildImage(join(work, 'second'), tarball);
  expect(again, 'a second build from the same tarball').toBe(digest);
  rootfs = join(work, 'rootfs');
  mkdirSync(rootfs);
  for (const layer of manifestOf().layers) {
    execFileSync('tar', ['-xzf', join(layout, 'blobs', 'sha256', layer.digest.replace(/^sha256:/, '')), '-C', rootfs]);
  }
}, 600_000);
afterAll(async () => {
  await deleteCreatedObjects();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the image of npm run image', () => {
  test('prints the digest of the manifest it wrote, and a second build gives the same', () => {
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(readFileSync(join(work, 'first', 'digest'), 'utf8').trim()).toBe(digest);
    const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
    expect(index.manifests.map((m) => m.digest)).toEqual([digest]);
  });

  test('its configuration is the final stage of deploy/Containerfile, run as the CronJob runs it', () => {
    const config = JSON.parse(blob(manifestOf().config).toString()) as ImageConfig;
    const containerfile = imageFromContainerfile(join(repo, 'deploy', 'Containerfile'), '/app', '/app', 'node');
    expect(config.config.Entrypoint).toEqual(containerfile.entrypoint);
    expect(config.config.Cmd).toEqual(containerfile.cmd);
    expect(config.config.WorkingDir).toBe(containerfile.workingDir);
    expect(Object.fromEntries(config.config.Env.map((line) => line.split(/=(.*)/s).slice(0, 2)))).toEqual(containerfile.env);
    const cronJob = parseAllDocuments(readFileSync(join(repo, 'deploy', 'cloudscale-ccm.yaml'), 'utf8'))
      .map((doc) => doc.toJSON() as { kind?: string; spec?: any })
      .find((doc) => doc.kind === 'CronJob');
    const security = cronJob?.spec.jobTemplate.spec.template.spec.securityContext;
    expect(config.config.User).toBe(`${security.runAsUser}:${security.runAsGroup}`);
    expect(config.os).toBe('linux');
    expect(config.rootfs.diff_ids).toHaveLength(2);
  });

  test('its layers hold the Node runtime and the installed package the entrypoint runs', () => {
    const app = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const expected = [
      'usr/local/bin/node',
      'etc/passwd',
      'app/package.json',
      'app/bin/cloudscale-ccm.js',
      'app/dist/cli.js',
      'app/dist/vendor/client-node.js',
      'app/dist/vendor/ink.js',
      'app/dist/vendor/yaml.js',
      ...Object.keys(app.dependencies).map((name) => `app/node_modules/${name}/package.json`),
    ];
    expect(expected.filter((path) => !existsSync(join(rootfs, path)))).toEqual([]);
    expect(readFileSync(join(rootfs, 'etc', 'passwd'), 'utf8')).toMatch(/^nonroot:x:65532:65532:/m);
    expect(existsSync(join(rootfs, 'app', 'src')) || existsSync(join(rootfs, 'app', 'test'))).toBe(false);
  });

  test.skipIf(noContainers !== undefined)('its root filesystem, read-only, runs plan as 65532 with its own Node against the test cluster and a simulator', async () => {
    const prefix = uniqueName('image');
    const harness: Harness = await startHarness({ seed: nodesSeed({ prefix, count: 1, privateNet: '10.41.0', publicNet: '5.102.149' }) });
    try {
      await createNode(`${prefix}-1`, { ready: true, taints: [{ key: UNINITIALIZED_TAINT_KEY, value: 'true', effect: 'NoSchedule' }] });
      // The test kubeconfig names its CA by a host path: inside the root filesystem it is inlined.
      const kubeconfig = parse(readFileSync(testKubeconfig(), 'utf8')) as { clusters: { cluster: Record<string, string> }[] };
      for (const { cluster } of kubeconfig.clusters) {
        if (cluster['certificate-authority'] === undefined) continue;
        cluster['certificate-authority-data'] = readFileSync(cluster['certificate-authority']).toString('base64');
        delete cluster['certificate-authority'];
      }
      mkdirSync(join(rootfs, 'run'), { recursive: true });
      writeFileSync(join(rootfs, 'run', 'kubeconfig'), JSON.stringify(kubeconfig));
      chmodSync(join(rootfs, 'run', 'kubeconfig'), 0o644);

      const config = JSON.parse(blob(manifestOf().config).toString()) as ImageConfig;
      const imageEnv = Object.fromEntries(config.config.Env.map((line) => line.split(/=(.*)/s).slice(0, 2)));
      // Read-only, as the CronJob mounts it (readOnlyRootFilesystem), in a mount namespace of its
      // own. chroot starts in / rather than the image's WorkingDir: the tool resolves no relative path.
      const enter = 'mount --bind -o ro "$0" "$0" && exec chroot --userspec="$1" "$0" "${@:2}"';
      const child = spawn(
        'unshare',
        ['--mount', '--propagation', 'private', 'bash', '-c', enter, rootfs, config.config.User, ...config.config.Entrypoint, '--cluster-id', harness.clusterId, 'plan', '-o', 'json'],
        {
          env: { ...imageEnv, KUBECONFIG: '/run/kubeconfig', CLOUDSCALE_API_URL: harness.sim.url, CLOUDSCALE_API_TOKEN: TEST_TOKEN },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'close')) as [number | null];
      expect(code, stderr).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ apiVersion: 'cloudscale-ccm/v1', kind: 'Plan' });
      expect(stdout).toContain(`${prefix}-1`);
    } finally {
      await harness.stop();
    }
  });

  test('crane pushes the layout to a registry, which reports the same digest', async () => {
    const crane = execFileSync('bash', [join(repo, 'scripts', 'image-tools', 'build.sh')], { encoding: 'utf8', env }).trim();
    const registry = spawn(crane, ['registry', 'serve', '--address', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const lines = createInterface({ input: registry.stderr })[Symbol.asyncIterator]();
      let port: string | undefined;
      while (port === undefined) {
        const line = await lines.next();
        if (line.done) throw new Error('crane registry serve exited before it served');
        port = /serving on port (\d+)/.exec(line.value)?.[1];
      }
      const reference = `127.0.0.1:${port}/cloudscale-ccm:test`;
      execFileSync(crane, ['push', layout, reference], { stdio: 'pipe' });
      expect(execFileSync(crane, ['digest', reference], { encoding: 'utf8' }).trim()).toBe(digest);
    } finally {
      registry.kill('SIGTERM');
      await once(registry, 'close');
    }
  });
});
