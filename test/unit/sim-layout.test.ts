// The simulator's files stay readable: none longer than 700 lines. A file that grows past it is
// split along its own seams (as server.ts into admin.ts, http.ts and request-log.ts, and
// dataplane.ts into its timings, health checks, views and event queue).
import { readFileSync, globSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 700;

test(`no file of src/sim is over ${MAX_LINES} lines`, () => {
  const long = globSync('src/sim/**/*.ts', { cwd: ROOT })
    .map((file) => ({ file, lines: readFileSync(`${ROOT}/${file}`, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
  expect(long).toEqual([]);
});
