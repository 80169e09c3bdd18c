// An image as `deploy/Containerfile` describes it, for the image test (test/cli/image.test.ts),
// which runs the built image's root filesystem under chroot: the final stage's ENTRYPOINT, CMD,
// ENV and WORKDIR, and whether this machine can enter a root filesystem at all. Pods run under a
// real kubelet (test/support/real-node.ts).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** What a container image contributes: its entrypoint, default arguments, environment, directory. */
export interface ContainerImage {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly workingDir: string;
}

/** The PATH container runtimes give an image that sets none. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The final stage of a Containerfile as the image this machine stands in for: ENTRYPOINT, CMD,
 * ENV and WORKDIR, with paths under `appDir` (the image's copy of the repository) mapped to
 * `localAppDir` and `node` to this Node.js binary.
 */
export function imageFromContainerfile(
  path: string,
  appDir: string,
  localAppDir: string,
  localNode: string = process.execPath,
): ContainerImage {
  const lines = readFileSync(path, 'utf8').split('\n');
  const finalStage = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const instruction = (name: string): string[] =>
    finalStage.filter((line) => line.toUpperCase().startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
  const local = (word: string): string =>
    word === 'node' ? localNode : word.startsWith(appDir) ? localAppDir + word.slice(appDir.length) : word;
  const execForm = (name: string): string[] => {
    const value = instruction(name).at(-1);
    return value === undefined ? [] : (JSON.parse(value) as string[]).map(local);
  };
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const assignment of instruction('ENV')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/.exec(assignment);
    if (match === null) throw new Error(`${path}: ENV ${assignment} is not of the form KEY=VALUE`);
    env[match[1]!] = match[2]!;
  }
  const workingDir = instruction('WORKDIR').at(-1);
  return { entrypoint: execForm('ENTRYPOINT'), cmd: execForm('CMD'), env, workingDir: local(workingDir ?? '/') };
}

/** Undefined when this machine can enter an image's root filesystem (root, a private mount namespace), else why not. */
export function containerSupport(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (a private mount namespace, bind mounts, another user)';
  const probe = spawnSync('unshare', ['--mount', '--propagation', 'private', 'true'], { encoding: 'utf8' });
  if (probe.status !== 0) return `unshare --mount does not work here: ${probe.error?.message ?? probe.stderr.trim()}`;
  return undefined;
}
