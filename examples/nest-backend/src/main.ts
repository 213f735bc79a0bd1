/** An example NestJS backend (Fastify) limited by the ratelimit service. */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { readSettings } from './settings';

async function main(): Promise<void> {
  const settings = readSettings();
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.with(settings),
    new FastifyAdapter(),
  );
  // SIGTERM or SIGINT: stop taking requests, drain the limiter connection, exit 0.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  await app.listen(settings.port, settings.host);
  console.log(`example-nest-backend listening on ${await app.getUrl()}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
