/**
 * The ratelimit service in a NestJS application: a module, a limited controller, a skipped route.
 * More in docs/nestjs.md; a whole backend in examples/nest-backend.
 */
import { Controller, Get, Module, Param } from '@nestjs/common';
import { RateLimit, RateLimitKeys, RateLimitModule, SkipRateLimit } from '@ratelimit/client/nest';

@Controller('items')
@RateLimit({ quota: 'api', key: RateLimitKeys.header('x-api-key') })
export class ItemsController {
  @Get(':id')
  item(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get()
  @SkipRateLimit()
  list(): { ids: string[] } {
    return { ids: [] };
  }
}

@Module({
  imports: [
    RateLimitModule.forRoot({
      servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      failurePolicy: 'closed', // no limiter answering: 503, no RateLimit headers
    }),
  ],
  controllers: [ItemsController],
})
export class AppModule {}
