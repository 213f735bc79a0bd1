import { Module } from '@nestjs/common';
import { ControlPublisher } from './control-publisher.service';
import { LimiterClient } from './limiter-client.service';
import { NatsConnectionService } from './nats-connection.service';
import { StatsAggregator } from './stats-aggregator.service';

/**
 * The admin's NATS side: the connection, the KV bucket the limiters watch (ControlPublisher), the
 * limiters' stats reports (StatsAggregator) and per-key questions to them (LimiterClient).
 * Needs ADMIN_SETTINGS from a global module (SettingsModule). No GraphQL here.
 */
@Module({
  providers: [NatsConnectionService, ControlPublisher, StatsAggregator, LimiterClient],
  exports: [NatsConnectionService, ControlPublisher, StatsAggregator, LimiterClient],
})
export class ControlModule {}
