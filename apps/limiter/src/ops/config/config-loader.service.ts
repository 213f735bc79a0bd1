import { ConfigError, parseConfigFile, type LimiterConfig } from '@app/contracts';
import { InvalidQuotaError } from '@app/engine';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { readFileSync, statSync } from 'node:fs';
import { QuotaLayersService } from '../../control/quota-layers.service';
import { LimiterService } from '../../engine-host/limiter.service';
import { ReadinessService } from '../../engine-host/readiness.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../../settings/limiter-settings';
import { FileWatcher } from './file-watcher';

/** A config file this large is a mistake (or an attack on the parser), not a list of quotas. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

export interface ConfigLoaderStats {
  applied: number;
  refused: number;
  /** False while the file on disk is refused and an older config is in force. */
  valid: boolean;
}

/**
 * Puts CONFIG_FILE in force and keeps it so (docs/contract.md, Config file), as the lower layer
 * under the admin's control set (QuotaLayersService). Without a file the default quota from the
 * GoCC variables is the whole config. A refused file (unreadable, ConfigError, InvalidQuotaError)
 * is logged with its line and field; the last good config stays in force and /readyz shows the
 * message. Until a file given at start has loaded once, /readyz answers 503.
 */
@Injectable()
export class ConfigLoaderService {
  private readonly log = new Logger('Config');
  private watcher: FileWatcher | undefined;
  /** The text last applied or refused: the same text again is neither re-applied nor re-logged. */
  private lastText: string | undefined;
  readonly stats: ConfigLoaderStats = { applied: 0, refused: 0, valid: true };

  constructor(
    @Inject(LIMITER_SETTINGS) private readonly settings: LimiterSettings,
    private readonly limiter: LimiterService,
    private readonly readiness: ReadinessService,
    private readonly layers: QuotaLayersService,
  ) {}

  /** Loads the config in force at start and begins watching the file. */
  start(): void {
    const file = this.settings.configFile;
    if (file === undefined) {
      this.readiness.configLoaded = true;
      this.log.log('no CONFIG_FILE: the default quota from MAX_REQUESTS/WINDOW_MILLIS is in force');
      return;
    }
    this.reload();
    this.watcher = new FileWatcher(
      file,
      () => this.reload(),
      undefined,
      (error) =>
        this.log.warn(`cannot watch the directory of ${file} (${error.message}); polling it`),
    );
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** Reads the file and puts it in force if it changed and is valid. */
  reload(): void {
    const file = this.settings.configFile;
    if (file === undefined) return;
    const text = this.read(file);
    if (text === undefined || text === this.lastText) return;
    this.lastText = text;
    let config: LimiterConfig;
    try {
      config = parseConfigFile(text, { gocc: this.settings.gocc, source: file });
      // In force over the admin's control set, if one is known (QuotaLayersService).
      this.layers.setConfig(config);
    } catch (error) {
      this.refuse(
        error instanceof InvalidQuotaError ? `${file}: ${error.message}` : message(error),
      );
      return;
    }
    const quotas = this.limiter.quotas().length;
    const providers =
      config.providers.length > 0 ? `, providers ${config.providers.join(', ')}` : '';
    this.log.log(`${file} in force: ${quotas} quotas (${config.format} format${providers})`);
    // Without Redis, cluster quotas are decided per replica: say so rather than let operators
    // assume exactness across replicas.
    const clustered = config.quotas.filter((q) => q.scope === 'cluster').map((q) => q.name);
    if (clustered.length > 0 && this.settings.redisUrls.length === 0) {
      this.log.warn(
        `scope: cluster needs REDIS_URL; ${clustered.join(', ')} decided by this replica only`,
      );
    }
    this.stats.applied++;
    this.stats.valid = true;
    this.readiness.configError = undefined;
    this.readiness.configLoaded = true;
  }

  private read(file: string): string | undefined {
    try {
      const size = statSync(file).size;
      if (size > MAX_CONFIG_BYTES) {
        throw new Error(`is ${size} bytes, more than the ${MAX_CONFIG_BYTES} allowed`);
      }
      return readFileSync(file, 'utf8');
    } catch (error) {
      // Forget the text: the same content coming back (a file restored) must clear the error.
      this.lastText = undefined;
      this.refuse(`${file}: cannot read: ${message(error)}`);
      return undefined;
    }
  }

  private refuse(reason: string): void {
    this.stats.refused++;
    this.stats.valid = false;
    this.readiness.configError = reason;
    const kept = this.readiness.configLoaded
      ? 'the last good config stays in force'
      : 'not ready until the file is valid';
    this.log.error(`config refused (${kept}): ${reason}`);
  }
}

function message(error: unknown): string {
  if (error instanceof ConfigError || error instanceof Error) return error.message;
  return String(error);
}
