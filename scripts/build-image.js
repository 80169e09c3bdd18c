// Builds the cloudscale-ccm image as an OCI image layout, without a container engine:
//
//   npm run image                      build dist/, then the image into .tmp/image/oci
//   npm run image -- --out DIR         the layout into DIR/oci instead
//   npm run image -- --no-build        use dist/ as it is (a test that just built it)
//   npm run image -- --cache DIR       keep compressed layers in DIR (default .tmp/image/cache)
//   npm run image -- --tarball FILE    the application from this tarball of `npm pack` (say the
//                                      published one) instead of packing the tree
//
// It prints the image's digest (sha256:…), the one to pin the CronJob to (docs/deploy.md,
// "The image"). Two layers:
//   1. the runtime: the Node binary of the `node` dev dependency as /usr/local/bin/node, the C
//      and C++ runtime libraries it links, taken from this machine's Debian packages libc6,
//      libgcc-s1 and libstdc++6 (their versions are in the image's labels), and /etc/passwd and
//      /etc/group naming the user 65532;
//   2. the application: /app is the tarball of `npm pack` (test/cli/package-install.test.ts
//      installs and runs the same tarball) with its runtime dependencies as package-lock.json
//      pins them.
// The configuration (entrypoint, command, environment, working directory, user) is read from
// the final stage of deploy/Containerfile, the stage the image test reads too, so the two images
// cannot drift apart in what they run; the CronJob tests run this image under a real kubelet.
//
// Reproducible: entries sorted by name, modification times SOURCE_DATE_EPOCH (default 0), owner
// root and modes normalised, gzip by the zlib of the pinned Node, no creation time. The same
// inputs (lockfile, sources, Debian package versions) give the same layer tars, so the same
// digest. Compressing the 126 MB Node binary is most of a build: a layer whose tar is already in
// the cache (by its sha256, the diff id) is not compressed again.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values: options } = parseArgs({
  options: {
    out: { type: 'string', default: join(root, '.tmp', 'image') },
    cache: { type: 'string', default: join(root, '.tmp', 'image', 'cache') },
    'no-build': { type: 'boolean', default: false },
    tarball: { type: 'string' },
  },
});
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? 0);
if (!Number.isSafeInteger(epoch) || epoch < 0) {
  process.stderr.write(`build-image: SOURCE_DATE_EPOCH=${process.env.SOURCE_DATE_EPOCH} is not a number of seconds since 1970 (e.g. $(git log -1 --format=%ct))\n`);
  process.exit(1);
}
/** The Debian packages whose shared libraries the Node binary links (ldd of the node binary). */
const RUNTIME_PACKAGES = ['libc6', 'libgcc-s1', 'libstdc++6'];
const NODE_BINARY = join(root, 'node_modules', 'node', 'bin', 'node');
const ARCHITECTURES = { x64: 'amd64', arm64: 'arm64' };
/** What a container runtime gives an image that sets no PATH; the base image of the Containerfile sets the same. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function fail(message) {
  process.stderr.write(`build-image: ${message}\n`);
  process.exit(1);
}

function run(command, args, cwd = root) {
  try {
    return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (error) {
    fail(`${command} ${args.join(' ')} failed: ${error.stderr || error.message}`);
  }
}

/** ENTRYPOINT, CMD, ENV, WORKDIR and USER of the Containerfile's final stage. */
function containerfileConfig(path) {
  const lines = readFileSync(path, 'utf8').split('\n');
  const finalStage = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const last = (name) => finalStage.filter((line) => line.toUpperCase().startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
  const env = [`PATH=${DEFAULT_PATH}`];
  for (const assignment of last('ENV')) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*=\S*$/.test(assignment)) fail(`${path}: ENV ${assignment} is not of the form KEY=VALUE`);
    env.push(assignment);
  }
  const [entrypoint, cmd, workdir, user] = [last('ENTRYPOINT').at(-1), last('CMD').at(-1), last('WORKDIR').at(-1), last('USER').at(-1)];
  if (entrypoint === undefined || workdir === undefined || user === undefined) fail(`${path}: the final stage needs ENTRYPOINT, WORKDIR and USER`);
  return { User: user, Env: env, Entrypoint: JSON.parse(entrypoint), Cmd: cmd === undefined ? [] : JSON.parse(cmd), WorkingDir: workdir };
}

/** A layer from a directory: the tar (its digest is the diff id) and its gzip (the blob). */
function layer(directory, work) {
  const tarPath = join(work, 'layer.tar');
  run('tar', [
    '--create', `--file=${tarPath}`, `--directory=${directory}`, '--sort=name', `--mtime=@${epoch}`,
    '--owner=0', '--group=0', '--numeric-owner', '--mode=u+rwX,go+rX,go-w', '--format=posix',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime', '--no-acls', '--no-xattrs', '.',
  ]);
  const tar = readFileSync(tarPath);
  rmSync(tarPath);
  const diffId = sha256(tar);
  const cached = join(options.cache, `${diffId}.tar.gz`);
  if (existsSync(cached)) return { diffId: `sha256:${diffId}`, blob: readFileSync(cached) };
  const blob = gzipSync(tar);
  mkdirSync(options.cache, { recursive: true });
  // A name of this process's own: builds running at once (the tests') may fill the cache together.
  const partial = `${cached}.${process.pid}.partial`;
  writeFileSync(partial, blob);
  renameSync(partial, cached);
  return { diffId: `sha256:${diffId}`, blob };
}

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

const work = mkdtempSync(join(tmpdir(), 'ccm-image-'));
try {
  if (!options['no-build'] && options.tarball === undefined) run('npm', ['run', '--silent', 'build']);
  const nodeVersion = run(NODE_BINARY, ['-p', 'process.version + " " + process.arch']).trim();
  const [version, arch] = nodeVersion.split(' ');
  if (ARCHITECTURES[arch] === undefined) fail(`no image for the architecture ${arch}`);

  // 1. The runtime.
  const runtime = join(work, 'runtime');
  mkdirSync(join(runtime, 'usr', 'local', 'bin'), { recursive: true });
  copyFileSync(NODE_BINARY, join(runtime, 'usr', 'local', 'bin', 'node'));
  chmodSync(join(runtime, 'usr', 'local', 'bin', 'node'), 0o755);
  const debianVersions = [];
  if (!existsSync('/var/lib/dpkg/status')) {
    fail('the runtime libraries come from the Debian packages of this machine, and it has no dpkg: build on Debian or Ubuntu, or use deploy/Containerfile');
  }
  for (const pkg of RUNTIME_PACKAGES) {
    debianVersions.push(`${pkg} ${run('dpkg-query', ['-W', '-f=${Version}', pkg])}`);
    for (const path of run('dpkg', ['-L', pkg]).split('\n')) {
      // Shared libraries and the dynamic loader; no gconv modules, documentation or programs.
      if (!/^\/(usr\/)?lib(64)?\//.test(path) || path.includes('/gconv/')) continue;
      const stat = lstatSync(path, { throwIfNoEntry: false });
      if (stat === undefined || stat.isDirectory()) continue;
      mkdirSync(dirname(join(runtime, path)), { recursive: true });
      cpSync(path, join(runtime, path), { verbatimSymlinks: true });
    }
  }
  mkdirSync(join(runtime, 'etc'));
  writeFileSync(join(runtime, 'etc', 'passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n');
  writeFileSync(join(runtime, 'etc', 'group'), 'root:x:0:\nnonroot:x:65532:\n');

  // 2. The application: the packed tarball with its runtime dependencies at the versions of
  // package-lock.json (a user's `npm install -g` resolves the same ranges anew).
  const tarball = options.tarball !== undefined ? resolve(options.tarball) : join(work, JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work]))[0].filename);
  const app = join(work, 'app');
  mkdirSync(app);
  run('tar', ['-xzf', tarball, '-C', app]);
  renameSync(join(app, 'package'), join(app, 'app'));
  copyFileSync(join(root, 'package-lock.json'), join(app, 'app', 'package-lock.json'));
  run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], join(app, 'app'));
  rmSync(join(app, 'app', 'package-lock.json'));
  rmSync(join(app, 'app', 'node_modules', '.package-lock.json'), { force: true });

  const layers = [layer(runtime, work), layer(app, work)];
  const oci = join(options.out, 'oci');
  rmSync(oci, { recursive: true, force: true });
  mkdirSync(join(oci, 'blobs', 'sha256'), { recursive: true });
  const blob = (mediaType, data) => {
    const digest = sha256(data);
    writeFileSync(join(oci, 'blobs', 'sha256', digest), data);
    return { mediaType, digest: `sha256:${digest}`, size: data.length };
  };

  const config = {
    ...(process.env.SOURCE_DATE_EPOCH === undefined ? {} : { created: new Date(epoch * 1000).toISOString() }),
    architecture: ARCHITECTURES[arch],
    os: 'linux',
    config: {
      ...containerfileConfig(join(root, 'deploy', 'Containerfile')),
      Labels: {
        'org.opencontainers.image.title': manifest.name,
        'org.opencontainers.image.version': manifest.version,
        'org.opencontainers.image.description': manifest.description,
        'org.opencontainers.image.licenses': manifest.license,
        'cloudscale-ccm.runtime': `Node.js ${version}; Debian ${readFileSync('/etc/debian_version', 'utf8').trim()}: ${debianVersions.join(', ')}`,
      },
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
  };
  const imageManifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: blob('application/vnd.oci.image.config.v1+json', Buffer.from(JSON.stringify(config))),
    layers: layers.map((l) => blob('application/vnd.oci.image.layer.v1.tar+gzip', l.blob)),
  };
  const manifestDescriptor = blob(imageManifest.mediaType, Buffer.from(JSON.stringify(imageManifest)));
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [{ ...manifestDescriptor, annotations: { 'org.opencontainers.image.ref.name': manifest.version } }],
  };
  writeFileSync(join(oci, 'index.json'), JSON.stringify(index));
  writeFileSync(join(oci, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(join(options.out, 'digest'), `${manifestDescriptor.digest}\n`);
  const megabytes = imageManifest.layers.reduce((sum, l) => sum + l.size, 0) / 1e6;
  process.stderr.write(`build-image: ${manifest.name}:${manifest.version} in ${oci} (${megabytes.toFixed(1)} MB compressed)\n`);
  process.stdout.write(`${manifestDescriptor.digest}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
