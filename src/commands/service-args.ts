import { CcmError, UsageError } from '../core/errors.js';
import { serviceName } from '../core/option-values.js';

export interface ServiceName {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The namespace of Service arguments and of manifests without one, read as kubectl reads -n:
 * the flag, else the namespace of the kubeconfig's current context, else `default`. A function,
 * asked only once the arguments are checked: a typo is reported before the kubeconfig is read.
 */
export type DefaultNamespace = () => string;

/**
 * Reads Service arguments the way kubectl does: `service/NAME` (or `svc/NAME`, `services/NAME`)
 * or a bare `NAME`, in `namespace`; `NAMESPACE/NAME` is not kubectl syntax and is refused with
 * a hint, because `svc/NAME` would be ambiguous with it.
 */
export function parseServiceArgs(args: readonly string[], namespace: DefaultNamespace): ServiceName[] {
  const names = args.map((arg) => {
    const slash = arg.indexOf('/');
    const kind = slash === -1 ? 'service' : arg.slice(0, slash);
    const name = slash === -1 ? arg : arg.slice(slash + 1);
    if (!['service', 'services', 'svc'].includes(kind)) {
      throw new UsageError(`"${arg}" is not a Service argument`, {
        hint: `write service/NAME and give the namespace with -n, e.g. -n ${kind} service/${name}`,
      });
    }
    return serviceName(arg, name);
  });
  if (names.length === 0) return [];
  const inNamespace = namespace();
  return names.map((name) => ({ namespace: inNamespace, name }));
}

/** A named Service that does not exist: an error of `plan` and `sync-lb` (a typo must not pass silently). */
export function serviceNotFound(name: ServiceName): CcmError {
  return new CcmError(`service ${name.namespace}/${name.name} not found`, {
    hint: 'check the name and the namespace (-n)',
  });
}
