import { Controller, Get, Headers, Param } from '@nestjs/common';
import type { KeyStats } from '@ratelimit/client';
import { RateLimit, RateLimitKeys, SkipRateLimit } from '@ratelimit/client/nest';
import { GREETINGS_QUOTA, GreetingsService } from './greetings.service';

/** Every route is charged to the caller's API key, except those marked @SkipRateLimit(). */
@Controller('greetings')
@RateLimit({ quota: GREETINGS_QUOTA, key: RateLimitKeys.header('x-api-key') })
export class GreetingsController {
  constructor(private readonly greetings: GreetingsService) {}

  @Get('health')
  @SkipRateLimit()
  health(): { status: 'ok' } {
    return this.greetings.health();
  }

  @Get('allowance')
  @SkipRateLimit()
  allowance(@Headers('x-api-key') apiKey: string): Promise<KeyStats> {
    return this.greetings.allowance(apiKey);
  }

  @Get(':name')
  greet(@Param('name') name: string): { greeting: string } {
    return this.greetings.greet(name);
  }
}
