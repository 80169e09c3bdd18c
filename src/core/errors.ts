// The closed error vocabulary of the tool. Adapters map library errors (ky, client-node) into
// these classes at their boundary; bin/ maps the classes to exit codes and prints each once.

/** Base class: every error the tool raises on purpose. `hint` tells the user how to fix it. */
export class CcmError extends Error {
  readonly hint: string | undefined;
  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options?.hint;
  }
}

/** A bad flag, argument or combination of them. Exit code 1, printed with a usage hint. */
export class UsageError extends CcmError {}

/** Bad configuration: environment, token file, kubeconfig, seed file, manifest. */
export class ConfigError extends CcmError {}

/** A Service annotation (or spec field) that cannot be parsed; names the annotation. */
export class AnnotationError extends CcmError {
  readonly annotation: string;
  constructor(annotation: string, message: string, options?: { cause?: unknown; hint?: string }) {
    super(`${annotation}: ${message}`, options);
    this.annotation = annotation;
  }
}

/** An error answer of the cloudscale API, keeping its `detail` and per-field messages. */
export class CloudscaleApiError extends CcmError {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly detail: string | undefined;
  readonly fieldErrors: Record<string, unknown>;
  constructor(init: {
    status: number;
    method: string;
    path: string;
    body: unknown;
    cause?: unknown;
  }) {
    const { detail, fieldErrors } = splitApiErrorBody(init.body);
    const summary = detail ?? formatFieldErrors(fieldErrors) ?? 'no error detail';
    super(`cloudscale API ${init.method} ${init.path} answered ${init.status}: ${summary}`, {
      cause: init.cause,
    });
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.detail = detail;
    this.fieldErrors = fieldErrors;
  }
  get isNotFound(): boolean {
    return this.status === 404;
  }
}

/** The cloudscale API could not be reached or did not answer in time, after retries. */
export class CloudscaleUnavailableError extends CcmError {}

/** An error answer of the Kubernetes API server. */
export class KubeApiError extends CcmError {
  readonly status: number;
  readonly reason: string | undefined;
  constructor(message: string, init: { status: number; reason?: string; cause?: unknown; hint?: string }) {
    super(message, { cause: init.cause, ...(init.hint === undefined ? {} : { hint: init.hint }) });
    this.status = init.status;
    this.reason = init.reason;
  }
  get isNotFound(): boolean {
    return this.status === 404;
  }
  get isConflict(): boolean {
    return this.status === 409;
  }
}

/** Work refused on purpose: a guard rail (node deletion bound, foreign owner, forbidden change). */
export class RefusedError extends CcmError {}

/** Another holder owns the Lease this pass needs. */
export class LockHeldError extends CcmError {}

/**
 * This pass can no longer prove the Lease is its own (not renewed within its renew deadline,
 * taken over, or the process was frozen): the write it was about to send was not sent, and the
 * pass sends none after it.
 */
export class LeaseLostError extends LockHeldError {}

/** A pass in which some objects failed; the failures were already reported one by one. */
export class PartialFailureError extends CcmError {
  readonly failures: readonly { object: string; error: Error }[];
  /** What the pass did achieve (the command's result), for callers that go on, like `run`. */
  readonly result: unknown;
  constructor(message: string, failures: readonly { object: string; error: Error }[], result?: unknown) {
    super(message);
    this.failures = failures;
    this.result = result;
  }
}

/** `status --fail-if-older-than`: the last success is too old, or the last pass did not succeed. */
export class UnhealthyError extends CcmError {}

/** A state the code believes impossible. A bug: please report it. */
export class InternalError extends CcmError {}

export function assertNever(value: never, what = 'value'): never {
  throw new InternalError(`unexpected ${what}: ${JSON.stringify(value)}`);
}

/** The message of any thrown value, for places that must accept `unknown`. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function splitApiErrorBody(body: unknown): {
  detail: string | undefined;
  fieldErrors: Record<string, unknown>;
} {
  if (typeof body === 'string') {
    return { detail: body.trim() === '' ? undefined : body.slice(0, 500), fieldErrors: {} };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { detail: undefined, fieldErrors: {} };
  }
  const { detail, ...rest } = body as Record<string, unknown>;
  return { detail: typeof detail === 'string' ? detail : undefined, fieldErrors: rest };
}

function formatFieldErrors(fieldErrors: Record<string, unknown>): string | undefined {
  const parts = Object.entries(fieldErrors).map(([field, messages]) => {
    const text = Array.isArray(messages)
      ? messages.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ')
      : typeof messages === 'string'
        ? messages
        : JSON.stringify(messages);
    return `${field}: ${text}`;
  });
  return parts.length === 0 ? undefined : parts.join('; ');
}
