import { Inject, Injectable, Logger, NotFoundException, StreamableFile } from '@nestjs/common';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { acceptsGzip } from './accept-encoding';
import { loadConsole, type ConsoleBundle } from './console-bundle';
import { CONSOLE_NOT_BUILT_PAGE } from './console-page';

export interface ConsoleAsset {
  readonly file: StreamableFile;
  /** `gzip` when the body is gzipped. */
  readonly encoding: 'gzip' | undefined;
}

export interface ConsolePage {
  readonly status: 200 | 503;
  readonly body: Buffer | string;
}

/** The web console from memory: read once at start, so a rebuild needs a restart. */
@Injectable()
export class ConsoleService {
  private readonly bundle: ConsoleBundle | undefined;

  constructor(@Inject(ADMIN_SETTINGS) settings: AdminSettings) {
    const logger = new Logger('Console');
    const loaded = loadConsole(settings.consoleDir);
    this.bundle = loaded.bundle;
    if (loaded.problem !== undefined) logger.warn(loaded.problem);
    else {
      const { dir, assets, bytes } = loaded.bundle;
      logger.log(`serving the web console from ${dir} (${assets.size + 1} files, ${bytes} bytes)`);
    }
  }

  page(): ConsolePage {
    if (this.bundle === undefined) return { status: 503, body: CONSOLE_NOT_BUILT_PAGE };
    return { status: 200, body: this.bundle.index };
  }

  /**
   * Only a name assets/ listed at start: `..%2F` and the like are names it never had. Gzipped
   * when the browser takes it (the admin has no compressing proxy in front of it by default).
   */
  asset(name: string, acceptEncoding: string | undefined): ConsoleAsset {
    const file = this.bundle?.assets.get(name);
    if (file === undefined) throw new NotFoundException(`the console has no file ${name}`);
    const gzip = file.gzip !== undefined && acceptsGzip(acceptEncoding) ? file.gzip : undefined;
    const body = gzip ?? file.body;
    return {
      file: new StreamableFile(body, { type: file.type, length: body.length }),
      encoding: gzip === undefined ? undefined : 'gzip',
    };
  }
}
