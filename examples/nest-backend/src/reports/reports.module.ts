import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { RateLimitClient } from '@ratelimit/client';
import { RateLimitThrottlerStorage } from '@ratelimit/client/throttler';
import { ReportsController } from './reports.controller';
import { ReportsService } from './reports.service';

/** The caller's API key when it sent one, else its IP (the throttler's own default). */
function tracker(req: Record<string, unknown>): Promise<string> {
  const headers = req['headers'] as Record<string, string | undefined>;
  return Promise.resolve(headers['x-api-key'] ?? String(req['ip']));
}

/**
 * @nestjs/throttler as usual; the one changed line is `storage`: the throttler named `reports`
 * is counted by the limiter's quota of that name.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [RateLimitClient],
      useFactory: (client: RateLimitClient) => ({
        throttlers: [{ name: 'reports', ttl: 60_000, limit: 2 }],
        getTracker: tracker,
        storage: new RateLimitThrottlerStorage(client),
      }),
    }),
  ],
  controllers: [ReportsController],
  providers: [ReportsService],
})
export class ReportsModule {}
