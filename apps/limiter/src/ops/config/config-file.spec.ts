import { GOCC_DEFAULTS } from '@app/contracts';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CONFIG_BYTES, readConfigFile } from './config-file';
import { readConfigInThread } from './config-reader';

const QUOTA = 'quotas:\n  - name: api\n    limits: [{ name: rps, limit: 3, window: 1s }]\n';

describe('readConfigFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'config-file-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const read = (file: string, lastDigest?: string) =>
    readConfigFile({ file, gocc: GOCC_DEFAULTS, lastDigest });

  it('reads a regular file (through a symlink too), and says when it is unchanged', () => {
    const file = join(dir, 'limits.yaml');
    writeFileSync(file, QUOTA);
    const first = read(file);
    expect(first).toMatchObject({ kind: 'valid', config: { format: 'native' } });
    if (first.kind !== 'valid') throw new Error('not valid');
    expect(first.config.quotas.map((q) => q.name)).toEqual(['default', 'api']);
    const link = join(dir, 'link.yaml');
    symlinkSync(file, link);
    expect(read(link, first.digest)).toEqual({ kind: 'unchanged' });
    writeFileSync(file, 'quotas: nope\n');
    expect(read(file, first.digest)).toMatchObject({ kind: 'invalid', reason: /line 1/ });
  });

  it.each<[string, (path: string) => void, string]>([
    ['a FIFO', (path) => execFileSync('mkfifo', [path]), 'is a FIFO'],
    ['a device', (path) => symlinkSync('/dev/zero', path), 'is a character device'],
    ['a directory', (path) => mkdirSync(path), 'is a directory'],
  ])('refuses %s at once, naming CONFIG_FILE', (_what, make, kind) => {
    const file = join(dir, 'limits.yaml');
    make(file);
    expect(read(file)).toEqual({
      kind: 'unreadable',
      reason: `CONFIG_FILE ${file}: cannot read: ${kind}; CONFIG_FILE must be a regular file`,
    });
  });

  it('refuses a missing file and one over the size limit', () => {
    const file = join(dir, 'limits.yaml');
    expect(read(file)).toMatchObject({ kind: 'unreadable', reason: /ENOENT/ });
    writeFileSync(file, '');
    truncateSync(file, MAX_CONFIG_BYTES + 1);
    expect(read(file)).toMatchObject({
      kind: 'unreadable',
      reason: `CONFIG_FILE ${file}: cannot read: is ${MAX_CONFIG_BYTES + 1} bytes, more than the ${MAX_CONFIG_BYTES} allowed`,
    });
  });

  it('answers the same in the config thread, the quotas passed back in messages', async () => {
    const file = join(dir, 'limits.yaml');
    const quotas = Array.from(
      { length: 450 },
      (_, i) =>
        `  - name: q${i}\n    match: 'q${i}-*'\n    limits: [{ name: rps, limit: 3, window: 1s }]\n`,
    );
    writeFileSync(file, `quotas:\n${quotas.join('')}`);
    const inThread = await readConfigInThread({ file, gocc: GOCC_DEFAULTS, lastDigest: undefined })
      .result;
    expect(inThread).toEqual(read(file));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const fifo = { file: join(dir, 'fifo'), gocc: GOCC_DEFAULTS, lastDigest: undefined };
    expect(await readConfigInThread(fifo).result).toEqual(readConfigFile(fifo));
  }, 60_000);
});
