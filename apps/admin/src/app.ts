import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { originHook } from './origin/origin-hook';
import { readAdminSettings, type AdminSettings } from './settings/admin-settings';

/** Builds the admin app on Fastify without listening; main.ts and the end-to-end tests share it. */
export async function createAdminApp(
  options: NestApplicationOptions = {},
  settings: AdminSettings = readAdminSettings(),
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(settings),
    // importConfig documents may be up to 4 MiB (MAX_IMPORT_DOCUMENT_BYTES) plus the JSON around them.
    new FastifyAdapter({ bodyLimit: 5 * 1024 * 1024 }),
    options,
  );
  // Before init registers the routes, so it runs for every one of them.
  app.getHttpAdapter().getInstance().addHook('onRequest', originHook(settings.origins));
  return app;
}
