import { Logger } from '@nestjs/common';
import { resolveFormat } from './create-logger';
import { jsonLines, memoryDestination } from './test-destination.test-util';
import { useLogger } from './use-logger';

const ESC = '\u001b';

afterEach(() => {
  Logger.overrideLogger(false);
});

describe('the JSON format', () => {
  it('writes one object a line: level, ISO time, app, pid, context, fields, msg', () => {
    const out = memoryDestination();
    useLogger('limiter', { logLevel: 'info', logFormat: 'json' }, out);
    new Logger('Config').log('no CONFIG_FILE');
    new Logger('LimiterHttp').warn({
      msg: '400 key: must not be empty',
      field: 'key',
      status: 400,
    });
    const [plain, fields] = jsonLines(out);
    expect(plain).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      app: 'limiter',
      pid: process.pid,
      context: 'Config',
      msg: 'no CONFIG_FILE',
    });
    expect(fields).toMatchObject({
      level: 'warn',
      context: 'LimiterHttp',
      msg: '400 key: must not be empty',
      field: 'key',
      status: 400,
    });
  });

  it("keeps Nest's error(message, stack) and takes an Error whole", () => {
    const out = memoryDestination();
    useLogger('admin', { logLevel: 'info', logFormat: 'json' }, out);
    const error = new Error('boom');
    new Logger('ExceptionsHandler').error('it failed', error.stack);
    new Logger('Admin').fatal(error);
    new Logger('Admin').error('no stack');
    const [withStack, whole, bare] = jsonLines(out);
    expect(withStack).toMatchObject({ level: 'error', msg: 'it failed', stack: error.stack });
    expect(whole).toMatchObject({ level: 'fatal', msg: 'boom', err: { message: 'boom' } });
    expect((whole!['err'] as { stack: string }).stack).toContain('boom');
    expect(bare).toMatchObject({ level: 'error', msg: 'no stack', context: 'Admin' });
    expect(bare).not.toHaveProperty('args');
  });

  it('takes a trailing stack for a stack, not for a context (no context per distinct stack)', () => {
    const out = memoryDestination();
    const logger = useLogger('admin', { logLevel: 'info', logFormat: 'json' }, out);
    const stacks = Array.from({ length: 3 }, (_, i) => new Error(`boom ${i}`).stack!);
    for (const stack of stacks) logger.error('it failed', stack);
    const lines = jsonLines(out);
    expect(lines.map((l) => l['stack'])).toEqual(stacks);
    for (const line of lines) expect(line).not.toHaveProperty('context');
  });

  it('writes only the levels LOG_LEVEL lets through', () => {
    const out = memoryDestination();
    useLogger('limiter', { logLevel: 'warn', logFormat: 'json' }, out);
    const logger = new Logger('X');
    logger.debug('d');
    logger.verbose('v');
    logger.log('i');
    logger.warn('w');
    logger.error('e');
    expect(jsonLines(out).map((l) => l['level'])).toEqual(['warn', 'error']);
  });

  it('writes nothing at LOG_LEVEL=silent, and every level at trace', () => {
    const silent = memoryDestination();
    useLogger('limiter', { logLevel: 'silent', logFormat: 'json' }, silent);
    new Logger('X').fatal('f');
    expect(silent.lines).toEqual([]);
    const all = memoryDestination();
    useLogger('limiter', { logLevel: 'trace', logFormat: 'json' }, all);
    new Logger('X').verbose('v');
    new Logger('X').debug('d');
    expect(jsonLines(all).map((l) => l['level'])).toEqual(['trace', 'debug']);
  });
});

describe('the pretty format', () => {
  it('writes text, without a single ANSI code when the destination is not a terminal', () => {
    const out = memoryDestination(false);
    useLogger('limiter', { logLevel: 'info', logFormat: 'pretty' }, out);
    new Logger('Limiter').warn({ msg: 'listening on http://127.0.0.1:8080', port: 8080 });
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(/WARN.*\[Limiter\] listening on http:\/\/127\.0\.0\.1:8080/);
    expect(out.lines[0]).toContain('"port":8080');
    expect(out.lines[0]).not.toContain(ESC);
    expect(() => JSON.parse(out.lines[0]!) as unknown).toThrow();
  });

  it('colours it for a terminal', () => {
    const out = memoryDestination(true);
    useLogger('limiter', { logLevel: 'info', logFormat: 'pretty' }, out);
    new Logger('Limiter').error('bad');
    expect(out.lines.join('\n')).toContain(ESC);
  });
});

describe('LOG_FORMAT unset', () => {
  it('is json unless stdout is a terminal', () => {
    expect(resolveFormat(undefined, false)).toBe('json');
    expect(resolveFormat(undefined, true)).toBe('pretty');
    expect(resolveFormat('json', true)).toBe('json');
    expect(resolveFormat('pretty', false)).toBe('pretty');
  });
});
