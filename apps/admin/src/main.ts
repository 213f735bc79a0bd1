import { Logger, ShutdownSignal } from '@nestjs/common';
import { createAdminApp } from './app';
import { readAdminSettings } from './settings/admin-settings';

async function bootstrap(): Promise<void> {
  const settings = readAdminSettings();
  const config = settings.listen;
  const app = await createAdminApp({ logger: config.logLevels }, settings);
  // SIGTERM/SIGINT: close the server and run the shutdown hooks, then exit 0.
  app.enableShutdownHooks([ShutdownSignal.SIGTERM, ShutdownSignal.SIGINT], {
    useProcessExit: true,
  });
  await app.listen(config.port, config.host);
  const logger = new Logger('Admin');
  logger.log(`listening on ${await app.getUrl()}`);
  if (settings.listenWarning !== undefined) logger.warn(settings.listenWarning);
}

bootstrap().catch((err: unknown) => {
  new Logger('Admin').fatal(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
