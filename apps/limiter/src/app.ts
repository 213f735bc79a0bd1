import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { answerClientError, answerRoutingError } from './http/http-errors';
import { MAX_PATH_PARAM_LENGTH } from './http/http-limits';
import { NatsTransport } from './nats/nats-transport.service';

/**
 * Builds the limiter on Fastify without listening on HTTP; main.ts and the end-to-end tests share
 * it. NATS is a Nest microservice with our own transport strategy (NatsTransport), started here:
 * it connects once the app has bootstrapped (at `listen` or `init`), whoever calls them.
 */
export async function createLimiterApp(
  options: NestApplicationOptions = {},
): Promise<NestFastifyApplication> {
  // Keys travel in paths (/rate/:key): the router must take a whole percent-encoded key.
  // No Nest middleware is used, so middie's per-request hook is skipped (the HTTP hot path).
  const adapter = new FastifyAdapter({
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    skipMiddie: true,
    // A malformed percent-encoding in a key is answered naming the field, like any bad input.
    frameworkErrors: answerRoutingError,
    // So are requests Node's parser refuses or times out (HttpServerService sets the timeouts).
    clientErrorHandler: answerClientError,
    // While draining, requests are answered by the routes (UNAVAILABLE in each route's shape),
    // never by Fastify's own 503 body.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, adapter, options);
  // The strategy is the DI provider itself: the control plane and the shutdown line use it too.
  app.connectMicroservice({ strategy: app.get(NatsTransport) }, { inheritAppConfig: true });
  await app.startAllMicroservices();
  return app;
}
