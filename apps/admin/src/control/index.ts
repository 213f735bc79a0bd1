export { ControlModule } from './control.module';
export {
  NatsConnectionService,
  type AdminNatsState,
  type NatsUpEvent,
  type NatsUpListener,
} from './nats-connection.service';
export {
  ControlPublisher,
  type ControlSetSource,
  type PublishOutcome,
  type ReconcileOutcome,
  type Restored,
} from './control-publisher.service';
export {
  StatsAggregator,
  STATS_UPDATE_EVERY_MS,
  type QuotaStatsSum,
  type StatsUpdate,
} from './stats-aggregator.service';
export {
  LimiterClient,
  FAN_OUT_MAX_WAIT_MS,
  USAGE_TIMEOUT_MS,
  type RecordUsageResult,
  type UsageCost,
} from './limiter-client.service';
export {
  combineKeyStats,
  combineReset,
  type KeyStatsResult,
  type ResetKeyResult,
} from './combine-answers';
