import { Module } from '@nestjs/common';
import { ApiHttpService } from './api-http.service';
import { GoccHttpService } from './gocc-http.service';
import { HttpRoutes } from './http-routes';

/** HTTP transport: GoCC routes, the JSON API, rate-limit headers and X-Correlation-ID. */
@Module({
  providers: [GoccHttpService, ApiHttpService, HttpRoutes],
})
export class HttpModule {}
