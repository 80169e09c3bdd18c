// Where the API token, URL and timeout come from (flags, then environment, then defaults), as
// docs/go-ccm-compatibility.md describes for the Go CCM. The token is never echoed: errors
// name the source it came from, never its value.
import { readFile } from 'node:fs/promises';
import { ConfigError, errorMessage } from '../errors.js';
import { checkedToken, defaultApiTimeoutMs, defaultApiUrl, normaliseBaseUrl } from './settings.js';

export interface ResolvedToken {
  readonly token: string;
  /** Where it came from, for messages: `--token-file /path`, `CLOUDSCALE_API_TOKEN`, ... */
  readonly source: string;
}

/**
 * `--token-file` (trimmed), then `CLOUDSCALE_API_TOKEN`, then `CLOUDSCALE_ACCESS_TOKEN` (the Go
 * CCM's name). Empty variables count as unset. Undefined when none is set: the caller then
 * falls back to the kube-system/cloudscale Secret. Throws ConfigError for a token file that
 * cannot be read or is empty, and for a token that cannot be sent in an HTTP header.
 */
export async function resolveCloudscaleToken(input: {
  tokenFile?: string | undefined;
  env: NodeJS.ProcessEnv;
}): Promise<ResolvedToken | undefined> {
  if (input.tokenFile !== undefined) {
    const source = `--token-file ${input.tokenFile}`;
    let text: string;
    try {
      text = await readFile(input.tokenFile, 'utf8');
    } catch (error) {
      const reason = errorMessage(error);
      throw new ConfigError(`cannot read the token file ${input.tokenFile}: ${reason}`, {
        cause: error,
        hint: 'pass a readable file that holds the cloudscale API token with --token-file',
      });
    }
    const token = text.trim();
    if (token === '') {
      throw new ConfigError(`the token file ${input.tokenFile} is empty`, {
        hint: 'write the cloudscale API token into it (cloudscale control panel → API tokens)',
      });
    }
    return { token: checkedToken(token, source), source };
  }
  for (const name of ['CLOUDSCALE_API_TOKEN', 'CLOUDSCALE_ACCESS_TOKEN']) {
    const token = input.env[name]?.trim();
    if (token !== undefined && token !== '') {
      return { token: checkedToken(token, name), source: name };
    }
  }
  return undefined;
}

/**
 * `--api-url`, then `CLOUDSCALE_API_URL`, then https://api.cloudscale.ch; normalised as
 * normaliseBaseUrl does. Throws ConfigError naming the flag or variable for a bad URL.
 */
export function resolveApiUrl(input: {
  flag?: string | undefined;
  env: NodeJS.ProcessEnv;
}): string {
  const fromEnv = input.env.CLOUDSCALE_API_URL?.trim();
  const [raw, source] =
    input.flag !== undefined
      ? [input.flag, '--api-url']
      : fromEnv !== undefined && fromEnv !== ''
        ? [fromEnv, 'CLOUDSCALE_API_URL']
        : [defaultApiUrl, 'the default'];
  try {
    return normaliseBaseUrl(raw);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${source}: ${error.message}`, { hint: error.hint });
  }
}

const maxApiTimeoutSeconds = 3600;

/**
 * `CLOUDSCALE_API_TIMEOUT` in whole seconds, as milliseconds; 20 000 when unset or empty.
 * Unlike the Go CCM, which ignores a bad value, this throws ConfigError naming the variable.
 */
export function resolveApiTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env.CLOUDSCALE_API_TIMEOUT?.trim();
  if (raw === undefined || raw === '') return defaultApiTimeoutMs;
  const seconds = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds > 0 && seconds <= maxApiTimeoutSeconds)) {
    throw new ConfigError(
      `CLOUDSCALE_API_TIMEOUT=${JSON.stringify(raw)} is not a whole number of seconds ` +
        `from 1 to ${maxApiTimeoutSeconds}`,
      { hint: 'set it to e.g. 20, or unset it for the default of 20 seconds' },
    );
  }
  return seconds * 1000;
}
