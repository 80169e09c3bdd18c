// The cloudscale API client's public surface: the composition root builds one client per run
// with resolveApiUrl / resolveApiTimeoutMs / resolveCloudscaleToken and hands it to the core.
export {
  createCloudscaleClient,
  tagQuery,
  type CloudscaleClient,
  type CloudscaleClientOptions,
  type TagFilter,
} from './client.js';
export {
  CloudscaleNoAnswerError,
  CloudscaleRequestError,
  fieldMessages,
  isOutcomeUnknown,
} from './errors.js';
export type { RequestCounter, RequestRecord, RequestSummary } from './request-counter.js';
export { defaultRetryPolicy, type RetryPolicy } from './retry.js';
export { defaultApiTimeoutMs, defaultApiUrl, normaliseBaseUrl } from './settings.js';
export {
  resolveApiTimeoutMs,
  resolveApiUrl,
  resolveCloudscaleToken,
  type ResolvedToken,
} from './token.js';
export type * from './types.js';
