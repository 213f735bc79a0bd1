import { Module } from '@nestjs/common';
import { ApiHttpService } from './api-http.service';
import { GoccHttpService } from './gocc-http.service';
import { HttpRoutes } from './http-routes';
import { HttpServerService } from './http-server.service';
import { RateLimitHeaders } from './rate-limit-headers';

/**
 * HTTP transport: GoCC routes, the JSON API, rate-limit headers and X-Correlation-ID; the
 * server's timeouts, connection cap and drain.
 */
@Module({
  providers: [GoccHttpService, ApiHttpService, HttpRoutes, HttpServerService, RateLimitHeaders],
  exports: [HttpServerService],
})
export class HttpModule {}
