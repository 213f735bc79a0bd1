import { fromJsonBody } from './json-body';
import { parseAcquire } from './parse-acquire';
import { parseBatch } from './parse-batch';
import { parseRelease } from './parse-release';
import { parseStats } from './parse-stats';
import { parseUsage } from './parse-usage';

/** The validators for raw bodies as they come off NATS or HTTP. */
export const parseAcquireJson = fromJsonBody(parseAcquire);
export const parseDecideJson = parseAcquireJson;
export const parseBatchJson = fromJsonBody(parseBatch);
export const parseReleaseJson = fromJsonBody(parseRelease);
export const parseUsageJson = fromJsonBody(parseUsage);
export const parseStatsJson = fromJsonBody(parseStats);
