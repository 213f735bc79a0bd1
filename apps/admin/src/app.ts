import type { NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';

/** Builds the admin app on Fastify without listening; main.ts and the end-to-end tests share it. */
export function createAdminApp(
  options: NestApplicationOptions = {},
): Promise<NestFastifyApplication> {
  return NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), options);
}
