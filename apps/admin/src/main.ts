import { lockDataDir } from '@app/contracts';
import { logListening, logStartFailure, useLogger } from '@app/logging';
import { Logger, ShutdownSignal } from '@nestjs/common';
import { createAdminApp } from './app';
import { readAdminSettings } from './settings/admin-settings';
import { adminSigningWarning } from './settings/admin-signing';
import { ShutdownLog } from './shutdown-log';

async function bootstrap(): Promise<void> {
  const settings = readAdminSettings();
  const config = settings.listen;
  const logger = useLogger('admin', config);
  // One admin per DATA_DIR (SQLite has one writer), taken before admin.sqlite is opened; removed
  // at exit.
  lockDataDir('admin', settings.dataDir, new Logger('Admin'));
  const app = await createAdminApp({ logger }, settings);
  // The shutdown line: timed from the signal, written once every shutdown hook has run.
  const shutdownLog = app.get(ShutdownLog);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => shutdownLog.begin());
  }
  process.once('exit', (code) => shutdownLog.write(code));
  // SIGTERM/SIGINT: close the server and run the shutdown hooks, then exit 0.
  app.enableShutdownHooks([ShutdownSignal.SIGTERM, ShutdownSignal.SIGINT], {
    useProcessExit: true,
  });
  await app.listen(config.port, config.host);
  // Before the start line, so whoever has read that line has read the warning.
  if (settings.listenWarning !== undefined) new Logger('Admin').warn(settings.listenWarning);
  const signingWarning = settings.nats && adminSigningWarning(settings.signing);
  if (signingWarning) new Logger('Admin').warn(signingWarning);
  logListening('Admin', app.getHttpServer());
}

bootstrap().catch((err: unknown) => {
  logStartFailure('admin', 'Admin', err);
  process.exit(1);
});
