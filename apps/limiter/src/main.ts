import { lockDataDir } from '@app/contracts';
import { logListening, logStartFailure, useLogger } from '@app/logging';
import { Logger, ShutdownSignal } from '@nestjs/common';
import { createLimiterApp } from './app';
import { limiterListenConfig } from './config';
import { LimiterService } from './engine-host/limiter.service';
import { readLimiterSettings } from './settings/limiter-settings';
import { goccOnlyVariableWarnings } from './settings/gocc-only-variables';
import { ShutdownLog } from './shutdown-log';

async function bootstrap(): Promise<void> {
  const config = limiterListenConfig();
  const logger = useLogger('limiter', config);
  // One limiter per DATA_DIR (its usage and control files), taken once the environment has been
  // read (an invalid one never touches DATA_DIR) and before any file in it is opened; removed at exit.
  lockDataDir('limiter', readLimiterSettings().dataDir, new Logger('Limiter'));
  const app = await createLimiterApp({ logger });
  // The drain starts at the signal: stop accepting, answer the waiters, start the drain deadline.
  // Registered first, so it runs before Nest's shutdown hooks, which go module by module.
  const limiter = app.get(LimiterService);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => limiter.drain());
  // The last line, what the drain did: once every shutdown hook has run and Nest exits.
  const shutdownLog = app.get(ShutdownLog);
  process.once('exit', (code) => shutdownLog.write(code));
  // SIGTERM/SIGINT: close the server and run the shutdown hooks, then exit 0.
  app.enableShutdownHooks([ShutdownSignal.SIGTERM, ShutdownSignal.SIGINT], {
    useProcessExit: true,
  });
  await app.listen(config.port, config.host);
  logListening('Limiter', app.getHttpServer());
  for (const warning of goccOnlyVariableWarnings()) new Logger('Limiter').warn(warning);
}

bootstrap().catch((err: unknown) => {
  logStartFailure('limiter', 'Limiter', err);
  process.exit(1);
});
