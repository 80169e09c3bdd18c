// CLOUDSCALE_CCM_EXEC_TIMEOUT: how long a kubeconfig's exec credential plugin may take.
import { describe, expect, test } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { resolveExecTimeoutMs } from '../../src/core/kube/exec-credential.js';

describe('resolveExecTimeoutMs', () => {
  test.each([
    [undefined, 30_000],
    ['', 30_000],
    ['5', 5_000],
    [' 120 ', 120_000],
  ])('%j → %i ms', (value, ms) => {
    expect(resolveExecTimeoutMs(value === undefined ? {} : { CLOUDSCALE_CCM_EXEC_TIMEOUT: value })).toBe(ms);
  });

  test.each(['0', '1.5', '-3', '10s', '0x10'])('%j is refused, naming the variable', (value) => {
    expect(() => resolveExecTimeoutMs({ CLOUDSCALE_CCM_EXEC_TIMEOUT: value })).toThrow(ConfigError);
    expect(() => resolveExecTimeoutMs({ CLOUDSCALE_CCM_EXEC_TIMEOUT: value })).toThrow(`CLOUDSCALE_CCM_EXEC_TIMEOUT takes a whole number ≥ 1, got "${value}"`);
  });
});
