// The last words of a process a second signal ends (src/core/stop.ts): every registered one is
// said at once, a failure or a word without an answer is reported and never holds the exit up
// past its deadline, and a word removed (its Lease released by the pass itself) is not said.
import { describe, expect, test } from 'vitest';
import { StopGate, type LastWord } from '../../src/core/stop.js';

function word(what: string, say: () => Promise<void>): LastWord {
  return { what, otherwise: 'it expires by itself', say };
}

describe('StopGate last words', () => {
  test.each<[string, () => Promise<void>, string | undefined]>([
    ['answered', async () => undefined, undefined],
    ['refused', async () => Promise.reject(new Error('write lease kube-system/cloudscale-ccm: connect ECONNREFUSED')), 'write lease kube-system/cloudscale-ccm: connect ECONNREFUSED'],
    ['never answered', () => new Promise<void>(() => undefined), 'no answer within 0.05 s'],
  ])('a word %s: reported as %s', async (_, say, problem) => {
    const gate = new StopGate();
    const said: string[] = [];
    gate.beforeExit(word('release the Lease', async () => {
      said.push('release the Lease');
      await say();
    }));
    const unsaid = await gate.sayLastWords(50);
    expect(said).toEqual(['release the Lease']);
    expect(unsaid.map((u) => u.problem)).toEqual(problem === undefined ? [] : [problem]);
  });

  test('all are said at once: one without an answer does not keep the others from being said', async () => {
    const gate = new StopGate();
    const said: string[] = [];
    gate.beforeExit(word('hang', () => new Promise<void>(() => undefined)));
    gate.beforeExit(word('release', async () => void said.push('release')));
    const unsaid = await gate.sayLastWords(50);
    expect(said).toEqual(['release']);
    expect(unsaid.map((u) => u.word.what)).toEqual(['hang']);
  });

  test('a word removed is not said; without words there is nothing to wait for', async () => {
    const gate = new StopGate();
    let said = false;
    const remove = gate.beforeExit(word('release', async () => void (said = true)));
    remove();
    expect(await gate.sayLastWords(10_000)).toEqual([]);
    expect(said).toBe(false);
  });
});
