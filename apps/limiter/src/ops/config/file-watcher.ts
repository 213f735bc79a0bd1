import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface FileWatcherOptions {
  /** Editors write in several steps (temp file, rename, chmod): wait this long after the last event. */
  readonly debounceMs: number;
  /** fs.watch misses changes on some file systems (NFS, some containers): stat this often too. */
  readonly pollMs: number;
}

export const DEFAULT_WATCH_OPTIONS: FileWatcherOptions = { debounceMs: 100, pollMs: 1000 };

/** Identifies a version of the file without reading it; a replaced file changes inode or ctime. */
function signatureOf(path: string): string {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch (error) {
    return `missing:${(error as NodeJS.ErrnoException).code ?? 'unknown'}`;
  }
}

/**
 * Calls `onChange` after `path` may have changed. Watches the directory, not the file: editors and
 * Kubernetes ConfigMaps replace the file by a rename (a watch on the old inode would go silent),
 * and ConfigMaps swap a `..data` symlink beside it. The periodic stat catches what fs.watch misses.
 * Spurious calls are possible; the caller compares contents.
 */
export class FileWatcher {
  private readonly name: string;
  private directoryWatch: FSWatcher | undefined;
  private readonly poll: NodeJS.Timeout;
  private debounce: NodeJS.Timeout | undefined;
  private signature: string;

  constructor(
    private readonly path: string,
    private readonly onChange: () => void,
    private readonly options: FileWatcherOptions = DEFAULT_WATCH_OPTIONS,
    onWatchError: (error: Error) => void = () => undefined,
  ) {
    this.name = basename(path);
    this.signature = signatureOf(path);
    try {
      this.directoryWatch = watch(dirname(path), { persistent: false }, (_event, file) => {
        if (file === null || file === this.name || file.startsWith('..')) this.schedule();
      });
      this.directoryWatch.on('error', (error) => {
        this.directoryWatch?.close();
        this.directoryWatch = undefined;
        onWatchError(error);
      });
    } catch (error) {
      // The directory may not exist yet; polling notices when the file appears.
      onWatchError(error as Error);
    }
    this.poll = setInterval(() => {
      if (signatureOf(this.path) !== this.signature) this.schedule();
    }, options.pollMs);
    this.poll.unref();
  }

  close(): void {
    this.directoryWatch?.close();
    this.directoryWatch = undefined;
    clearInterval(this.poll);
    clearTimeout(this.debounce);
    this.debounce = undefined;
  }

  private schedule(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.signature = signatureOf(this.path);
      this.onChange();
    }, this.options.debounceMs);
    this.debounce.unref();
  }
}
