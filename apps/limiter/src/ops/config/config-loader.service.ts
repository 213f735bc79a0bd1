import type { LimiterConfig } from '@app/contracts';
import { InvalidQuotaError } from '@app/engine';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { QuotaLayersService } from '../../control/quota-layers.service';
import { LimiterService } from '../../engine-host/limiter.service';
import { ReadinessService } from '../../engine-host/readiness.service';
import { LIMITER_SETTINGS, type LimiterSettings } from '../../settings/limiter-settings';
import { readConfigFile, type ConfigRead } from './config-file';
import { readConfigInThread, type ConfigReading } from './config-reader';
import { FileWatcher } from './file-watcher';

export interface ConfigLoaderStats {
  applied: number;
  refused: number;
  /** False while the file on disk is refused and an older config is in force. */
  valid: boolean;
}

/**
 * Puts CONFIG_FILE in force and keeps it so (docs/contract.md, Config file), as the lower layer
 * under the admin's control set (QuotaLayersService). Without a file the default quota from the
 * GoCC variables is the whole config. A refused file (unreadable, not a regular file, ConfigError,
 * InvalidQuotaError) is logged with its line and field; the last good config stays in force and
 * /readyz shows the message. Until a file given at start has loaded once, /readyz answers 503.
 * At start the file is read here, before anything is served; a reload reads and parses it in a
 * thread (readConfigInThread) and puts it in force in slices, so requests go on meanwhile.
 */
@Injectable()
export class ConfigLoaderService {
  private readonly log = new Logger('Config');
  private watcher: FileWatcher | undefined;
  /** The digest of the bytes last applied or refused: the same again is neither applied nor logged. */
  private lastDigest: string | undefined;
  private reading: ConfigReading | undefined;
  /** The reload under way; `again`: the file changed meanwhile, read it once more after. */
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
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
    const config = this.accepted(
      readConfigFile({ file, gocc: this.settings.gocc, lastDigest: undefined }),
    );
    if (config !== undefined) {
      try {
        this.layers.setConfig(config);
        this.applied(config);
      } catch (error) {
        this.refuse(this.reasonOf(error));
      }
    }
    this.watcher = new FileWatcher(
      file,
      () => void this.reload(),
      undefined,
      (error) =>
        this.log.warn(`cannot watch the directory of ${file} (${error.message}); polling it`),
    );
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    this.reading?.cancel();
  }

  /**
   * Reads the file again and puts it in force if it changed and is valid; resolves once done. A
   * call while a reload is under way makes that one read the file once more when it is done.
   */
  reload(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.reloadWhileChanged().finally(() => (this.running = undefined));
    return this.running;
  }

  private async reloadWhileChanged(): Promise<void> {
    const file = this.settings.configFile;
    if (file === undefined || this.stopped) return;
    do {
      this.again = false;
      this.reading = readConfigInThread({
        file,
        gocc: this.settings.gocc,
        lastDigest: this.lastDigest,
      });
      const read = await this.reading.result;
      this.reading = undefined;
      if (this.stopped) return; // a read cancelled by stop() is no refusal
      const config = this.accepted(read);
      if (config === undefined) continue;
      try {
        await this.layers.setConfigInSlices(config);
        this.applied(config);
      } catch (error) {
        this.refuse(this.reasonOf(error));
      }
    } while (this.again && !this.stopped);
  }

  /** The config of a read to put in force, or undefined (the read is refused or unchanged). */
  private accepted(read: ConfigRead): LimiterConfig | undefined {
    if (read.kind === 'unchanged') return undefined;
    if (read.kind === 'unreadable') {
      // Forget the digest: the same content coming back (a file restored) must clear the error.
      this.lastDigest = undefined;
      this.refuse(read.reason);
      return undefined;
    }
    this.lastDigest = read.digest;
    if (read.kind === 'valid') return read.config;
    this.refuse(read.reason);
    return undefined;
  }

  private reasonOf(error: unknown): string {
    if (error instanceof InvalidQuotaError) return `${this.settings.configFile}: ${error.message}`;
    return error instanceof Error ? error.message : String(error);
  }

  private applied(config: LimiterConfig): void {
    const file = this.settings.configFile;
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
