import { API_ROUTES, GOCC_ROUTES } from '@app/contracts';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { LIMITER_SETTINGS, type LimiterSettings } from '../settings/limiter-settings';
import { ApiHttpService } from './api-http.service';
import { echoCorrelationIds } from './correlation-id';
import { requireDebugToken } from './debug-token';
import { answerHttpError } from './http-errors';
import { acceptRawBodies } from './raw-body';
import { GoccHttpService } from './gocc-http.service';
import type {
  DebugListRoute,
  DebugRoute,
  GoccReleaseRoute,
  JsonRoute,
  RateRoute,
  StatsRoute,
} from './route-types';

/**
 * Registers the limiter's routes on the Fastify instance directly rather than through Nest
 * controllers: the hot routes (`/rate/:key`, `/v1/acquire`) then run no guards, pipes,
 * interceptors, exception zones or per-request context (the HTTP benchmark compares
 * `POST /rate/:key` with a raw Fastify route). Each handler only delegates to an HTTP service.
 * The routes live in their own plugin so that its raw-body parser and error handler apply to them
 * alone. X-Correlation-ID is set on the server's raw responses, so every response carries it.
 * The routes that show keys and their counts require DEBUG_TOKEN when it is set.
 */
@Injectable()
export class HttpRoutes implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly gocc: GoccHttpService,
    private readonly api: ApiHttpService,
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
  ) {}

  async onModuleInit(): Promise<void> {
    // Absent when the module runs without an HTTP server (a context built for NATS alone).
    const adapter = this.adapterHost.httpAdapter as typeof this.adapterHost.httpAdapter | undefined;
    if (adapter === undefined) return;
    const fastify = adapter.getInstance<FastifyInstance>();
    echoCorrelationIds(fastify.server);
    await fastify.register((scope, _options, done) => {
      this.register(scope);
      done();
    });
  }

  private register(scope: FastifyInstance): void {
    acceptRawBodies(scope);
    scope.setErrorHandler(answerHttpError);
    const debugToken = requireDebugToken(this.settings.debugToken);
    const listsKeys = debugToken === undefined ? {} : { onRequest: debugToken };

    // HEAD must not acquire, so the GET route exposes none.
    scope.route<RateRoute>({
      method: ['GET', 'POST'],
      url: GOCC_ROUTES.rate,
      exposeHeadRoute: false,
      handler: (request, reply) => this.gocc.rate(request, reply),
    });
    scope.delete<GoccReleaseRoute>(GOCC_ROUTES.release, (request, reply) =>
      this.gocc.release(request, reply),
    );
    scope.get<DebugRoute>(GOCC_ROUTES.debug, listsKeys, (request, reply) =>
      this.gocc.debug(request, reply),
    );
    scope.get<DebugListRoute>(GOCC_ROUTES.debugList, listsKeys, (request, reply) =>
      this.gocc.debugList(request, reply),
    );

    scope.post<JsonRoute>(API_ROUTES.acquire, (request, reply) => this.api.acquire(request, reply));
    scope.post<JsonRoute>(API_ROUTES.acquireBatch, (request, reply) =>
      this.api.batch(request, reply),
    );
    scope.post<JsonRoute>(API_ROUTES.decide, (request, reply) => this.api.decide(request, reply));
    scope.post<JsonRoute>(API_ROUTES.release, (request, reply) => this.api.release(request, reply));
    scope.post<JsonRoute>(API_ROUTES.usage, (request, reply) => this.api.usage(request, reply));
    scope.get<StatsRoute>(API_ROUTES.stats, listsKeys, (request, reply) =>
      this.api.stats(request, reply),
    );
  }
}
