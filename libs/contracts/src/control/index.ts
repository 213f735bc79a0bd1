export * from './control-names';
export * from './control-entries';
export * from './control-messages';
export * from './control-change';
export * from './bucket-view';
export { composeQuotas } from './compose-quotas';
export { parseStatsReport } from './parse-stats-report';
export * from './signing';
export * from './top-refused';
