import { Injectable } from '@nestjs/common';
import type { KeyStats } from '@ratelimit/client';
import { RateLimitClient } from '@ratelimit/client';

export const GREETINGS_QUOTA = 'example-api';

@Injectable()
export class GreetingsService {
  constructor(private readonly limiter: RateLimitClient) {}

  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  greet(name: string): { greeting: string } {
    return { greeting: `Hello, ${name}!` };
  }

  /** What the caller has left: a service asks the limiter directly, charging nothing. */
  allowance(apiKey: string): Promise<KeyStats> {
    return this.limiter.stats({ key: apiKey, quota: GREETINGS_QUOTA });
  }
}
