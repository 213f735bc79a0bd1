/** Public wire contract of the rate limiter (docs/contract.md). */

export * from './codes';
export * from './subjects';
export * from './routes';
export * from './headers';
export * from './quota-spec';
export * from './key-match';
export * from './providers';

export * from './messages/limits';
export * from './messages/fields';
export * from './messages/acquire';
export * from './messages/batch';
export * from './messages/release';
export * from './messages/usage';
export * from './messages/stats';
export * from './messages/error-reply';
export * from './messages/gocc-debug';
export type * from './messages/normalised';
export type { EngineCompatibility } from './messages/engine-compat';

export * from './validation/parse-result';
export { parseKey, normaliseKey } from './validation/key';
export { parseAcquire, parseDecide } from './validation/parse-acquire';
export { parseBatch, parseBatchEntry, type BatchEntry } from './validation/parse-batch';
export { parseRelease } from './validation/parse-release';
export { parseUsage } from './validation/parse-usage';
export { parseStats } from './validation/parse-stats';
export { parseJsonBody, fromJsonBody } from './validation/json-body';
export * from './validation/parse-json';
export { invalidAcquireReply, invalidRequestReply } from './validation/invalid-reply';
export {
  parseAcquireReply,
  parseBatchReply,
  parseErrorReply,
  parseKeyStatsReply,
  parseReleaseReply,
  parseUsageReply,
} from './validation/parse-reply';
export { parseGoccRateQuery, type GoccRateOptions } from './validation/gocc-query';
export {
  encodeDebugListCursor,
  parseGoccDebugListQuery,
  type DebugListCursor,
  type DebugListOptions,
} from './validation/gocc-debug-query';

export { ConfigError, type ConfigIssue } from './config/config-error';
export { parseDuration, formatDuration } from './config/duration';
export {
  parseConfigFile,
  readConfigDocument,
  type ConfigFormat,
  type LimiterConfig,
  type ParseConfigOptions,
} from './config/parse-config';
export {
  parseYaml,
  locateField,
  throwLocatedIssues,
  MAX_NESTING_DEPTH,
  TOO_DEEP,
  type ParsedYaml,
} from './config/yaml-document';
export {
  GOCC_DEFAULTS,
  DEFAULT_QUEUE_MAX_WAIT_MS,
  goccDefaultQuota,
  goccQuota,
  goccQueueMaxWaitMs,
  readGoccSettings,
  requestsLimitName,
  type GoccSettings,
} from './config/gocc-default';
export { goccQuotaName } from './config/gocc-config';
export { CONFIG_FIELDS, GOCC_FILE_FIELDS, GOCC_KEY_FIELDS } from './config/config-fields';
export { DEFAULT_LEASE_TTL_MS } from './config/read-quota';
export { isIanaTimeZone } from './config/timezone';
export {
  envValue,
  listenConfig,
  LOG_FORMATS,
  parseFlag,
  LOG_LEVELS,
  parseLogFormat,
  parseLogLevel,
  parsePort,
  parsePositiveInt,
  redactUrl,
} from './env';
export type { Env, EnvName, ListenConfig, LogFormat, LogLevel } from './env';
export { ENV_VARIABLES } from './env-variables';
export { readCertificateFile, readEnvFile, readPrivateKeyFile } from './env-files';
export {
  DataDirInUseError,
  dataDirLockPath,
  DEFAULT_DATA_DIR,
  lockDataDir,
  readDataDir,
  type DataDirLock,
} from './data-dir-lock';
export type { AppName, EnvVariable } from './env-variables';

export * from './control';
export { readQuota } from './config/read-quota';
export { IssueList, formatConfigPath, type ConfigPath, type PathIssue } from './config/issues';
export {
  fieldValue,
  isMapping,
  readInteger,
  readMapping,
  refuseUnknownFields,
  requireField,
  type Mapping,
} from './config/readers';
export { NAME_RULE } from './config/read-limit';
