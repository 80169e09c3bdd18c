import { CcmError, PartialFailureError, UsageError } from '../errors.js';
import { escapeUnprintable } from '../text/untrusted.js';

/**
 * The one place a failure is turned into text for a person: the message, the hint that says
 * how to fix it, and with --verbose the chain of causes. Never prints credentials: errors are
 * built without them. Never prints a control character raw: messages quote names and answers
 * from outside, and each line is escaped.
 */
export function formatTopLevelError(error: unknown, options: { verbose: boolean }): string {
  const lines: string[] = [];
  if (error instanceof PartialFailureError) {
    lines.push(`error: ${error.message}`);
    for (const failure of error.failures) lines.push(`  ${failure.object}: ${failure.error.message}`);
  } else if (error instanceof CcmError) {
    lines.push(`error: ${error.message}`);
  } else if (error instanceof Error) {
    lines.push(`error: ${error.message}`);
    if (options.verbose && error.stack) lines.push(...error.stack.split('\n'));
  } else {
    lines.push(`error: ${String(error)}`);
  }
  if (error instanceof CcmError && error.hint) lines.push(`hint: ${error.hint}`);
  // Every usage error says where the usage is described, even when its thrower gave no hint.
  else if (error instanceof UsageError) lines.push('hint: run the command with --help for its usage');
  if (options.verbose) {
    let cause = error instanceof Error ? error.cause : undefined;
    while (cause !== undefined) {
      lines.push(`cause: ${cause instanceof Error ? cause.message : String(cause)}`);
      cause = cause instanceof Error ? cause.cause : undefined;
    }
  }
  return `${lines.map(escapeUnprintable).join('\n')}\n`;
}
