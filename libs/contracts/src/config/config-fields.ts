/**
 * Every field the config file accepts, by where it stands: the readers refuse any other (GoCC's
 * format excepted, whose readers ignore them, as GoCC does). docs/contract.md lists the same
 * fields, and a test keeps the two equal.
 */

const POLICY_FIELDS = [
  'limits',
  'queue',
  'concurrency',
  'scope',
  'onStoreFailure',
  'lease',
  'shadow',
  'clientOverrides',
] as const;

export const CONFIG_FIELDS = {
  /** The file's top level (this project's format). */
  file: ['defaults', 'quotas', 'providers'],
  quota: ['name', 'match', ...POLICY_FIELDS],
  /** `defaults:` overrides these fields of the default quota. */
  defaults: POLICY_FIELDS,
  limit: [
    'name',
    'unit',
    'limit',
    'window',
    'windowMs',
    'algorithm',
    'burst',
    'align',
    'timezone',
    'precision',
  ],
  queue: ['maxSize', 'maxWaitMs'],
  concurrency: ['max', 'leaseTtlMs'],
} as const;

/** GoCC's JSON config: `{ "keys": [ { ...GOCC_KEY_FIELDS } ] }`. */
export const GOCC_FILE_FIELDS = { keys: 'keys' } as const;

export const GOCC_KEY_FIELDS = {
  pattern: 'key_pattern',
  isRegex: 'key_pattern_is_regex',
  maxRequests: 'max_requests_per_window',
  maxRequestsInQueue: 'max_requests_in_queue',
  windowMillis: 'window_millis',
} as const;
