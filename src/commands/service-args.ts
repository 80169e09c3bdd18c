import { UsageError } from '../core/errors.js';

export interface ServiceName {
  readonly namespace: string;
  readonly name: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * Reads Service arguments the way kubectl does: `service/NAME` (or `svc/NAME`, `services/NAME`)
 * or a bare `NAME`, in `namespace`; `NAMESPACE/NAME` is not kubectl syntax and is refused with
 * a hint, because `svc/NAME` would be ambiguous with it.
 */
export function parseServiceArgs(args: readonly string[], namespace: string): ServiceName[] {
  return args.map((arg) => {
    const slash = arg.indexOf('/');
    const kind = slash === -1 ? 'service' : arg.slice(0, slash);
    const name = slash === -1 ? arg : arg.slice(slash + 1);
    if (!['service', 'services', 'svc'].includes(kind)) {
      throw new UsageError(`"${arg}" is not a Service argument`, {
        hint: `write service/NAME and give the namespace with -n, e.g. -n ${kind} service/${name}`,
      });
    }
    if (!DNS_LABEL.test(name)) {
      throw new UsageError(`"${arg}": "${name}" is not a valid Service name`, {
        hint: 'Service names are DNS labels: lower-case letters, digits and "-", at most 63 characters',
      });
    }
    return { namespace, name };
  });
}
