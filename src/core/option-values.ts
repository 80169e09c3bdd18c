// The rules for the values of command-line flags, one place for each: the command line applies
// them to what is typed (src/cli.ts), and `apply` to what a saved plan holds of the same flags
// (src/core/plan/saved-plan.ts), so a file cannot carry a value the flag would refuse. Each
// takes the text as typed and returns the value, or throws a UsageError naming the flag.
import { UsageError } from './errors.js';

/** Digits only: Number() alone would also take "0x10", "1e3", " 7" and "" (as 0). */
const wholeNumber = /^\d+$/;
const decimalNumber = /^\d+(\.\d+)?$/;

export function wholeNumberFrom(flag: string, min: number): (value: string) => number {
  return (value) => {
    const n = wholeNumber.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} takes a whole number ≥ ${min}, got "${value}"`);
    return n;
  };
}

export function nonNegativeNumber(flag: string): (value: string) => number {
  return (value) => {
    const n = decimalNumber.test(value) ? Number(value) : Number.NaN;
    if (!Number.isFinite(n) || n < 0) throw new UsageError(`${flag} takes a number ≥ 0, got "${value}"`);
    return n;
  };
}

/** A TCP port; `min` 0 where 0 means "any free port". */
export function portNumber(flag: string, min: 0 | 1): (value: string) => number {
  return (value) => {
    const n = wholeNumber.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > 65535) throw new UsageError(`${flag} takes ${min}–65535, got "${value}"`);
    return n;
  };
}

/**
 * --cluster-id, the ownership tag value: load balancers tagged with an empty one count as
 * untagged (adopted by any cluster), so a blank identity is refused rather than used.
 */
export function clusterIdValue(value: string): string {
  if (value.trim() === '') {
    throw new UsageError(
      '--cluster-id must not be empty: it tags every load balancer this cluster owns (leave the flag out to use the uid of namespace kube-system)',
    );
  }
  if (value !== value.trim()) {
    throw new UsageError(`--cluster-id ${JSON.stringify(value)} has spaces around it: the tag would not match the one written before`);
  }
  return value;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** -n: a namespace name is a DNS label (a typo would otherwise end as "service … not found"). */
export function namespaceName(value: string): string {
  if (!DNS_LABEL.test(value)) {
    throw new UsageError(`-n "${value}" is not a valid namespace name`, {
      hint: 'namespace names are DNS labels: lower-case letters, digits and "-", at most 63 characters',
    });
  }
  return value;
}

/** A Service name as `service/NAME` (or a bare NAME) gives it: a DNS label. `arg` is what was typed. */
export function serviceName(arg: string, name: string): string {
  if (!DNS_LABEL.test(name)) {
    throw new UsageError(`"${arg}": "${name}" is not a valid Service name`, {
      hint: 'Service names are DNS labels: lower-case letters, digits and "-", at most 63 characters',
    });
  }
  return name;
}
