import {
  listenConfig,
  parseFlag,
  parseLogFormat,
  parseLogLevel,
  parsePort,
  parsePositiveInt,
} from './env';

const limiterListenConfig = (env: Record<string, string>) => listenConfig(env, 'PORT', 8080);

describe('listen config from the environment', () => {
  it('defaults to 0.0.0.0:8080 at level info', () => {
    expect(limiterListenConfig({})).toEqual({
      host: '0.0.0.0',
      port: 8080,
      logLevel: 'info',
      logFormat: undefined,
    });
  });

  it('reads HOST, PORT, LOG_LEVEL and LOG_FORMAT', () => {
    const config = limiterListenConfig({
      HOST: '127.0.0.1',
      PORT: '9000',
      LOG_LEVEL: 'Silent',
      LOG_FORMAT: ' pretty ',
    });
    expect(config).toEqual({
      host: '127.0.0.1',
      port: 9000,
      logLevel: 'silent',
      logFormat: 'pretty',
    });
  });

  it('treats empty values as unset', () => {
    expect(limiterListenConfig({ HOST: '', PORT: ' ', LOG_LEVEL: '', LOG_FORMAT: '' })).toEqual(
      limiterListenConfig({}),
    );
  });

  it.each(['abc', '-1', '65536', '80.5', '1e3', '0x50'])('refuses PORT=%s', (raw) => {
    expect(() => parsePort('PORT', raw, 8080)).toThrow(/PORT must be a port number/);
  });

  it('refuses an unknown LOG_LEVEL', () => {
    expect(() => parseLogLevel('loud')).toThrow(/LOG_LEVEL must be one of/);
    expect(() => parseLogLevel('toString')).toThrow(/LOG_LEVEL must be one of/);
  });

  it('refuses an unknown LOG_FORMAT, naming the variable and the values', () => {
    expect(() => parseLogFormat('xml')).toThrow(
      'LOG_FORMAT must be one of json, pretty, text, system-default, got "xml"',
    );
    expect(parseLogFormat('JSON')).toBe('json');
  });

  it.each([
    ['text', 'pretty'],
    ['Text', 'pretty'],
    ['system-default', undefined],
  ])("takes GoCC's LOG_FORMAT %s as %s", (gocc, format) => {
    expect(parseLogFormat(gocc)).toBe(format);
  });
});

describe('admin listen config', () => {
  it('reads ADMIN_PORT, default 8081, and shares HOST', () => {
    expect(listenConfig({}, 'ADMIN_PORT', 8081).port).toBe(8081);
    expect(listenConfig({ ADMIN_PORT: '9001', HOST: '::1' }, 'ADMIN_PORT', 8081)).toMatchObject({
      host: '::1',
      port: 9001,
    });
  });
});

describe('parsePositiveInt', () => {
  it('reads 1..max, and the fallback when unset or empty', () => {
    expect(parsePositiveInt('SHARDS', '250', 10, 1000)).toBe(250);
    expect(parsePositiveInt('SHARDS', '1000', 10, 1000)).toBe(1000);
    expect(parsePositiveInt('SHARDS', undefined, 10, 1000)).toBe(10);
    expect(parsePositiveInt('SHARDS', ' ', 10, 1000)).toBe(10);
  });

  it.each(['0', '1001', '-5', '2.5', '1e3', 'abc', '9999999999'])(
    'refuses %s naming the variable',
    (raw) => {
      expect(() => parsePositiveInt('ADMIN_OPERATION_TIMEOUT_MS', raw, 10, 1000)).toThrow(
        /ADMIN_OPERATION_TIMEOUT_MS must be an integer 1\.\.1000/,
      );
    },
  );
});

describe('parseFlag', () => {
  it.each([
    [undefined, false],
    ['', false],
    [' ', false],
    ['true', true],
    [' TRUE ', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads %j as %s', (raw, expected) => {
    expect(parseFlag('ADMIN_INSECURE', raw)).toBe(expected);
  });

  it.each(['yes', 'on', '2', 'truthy'])('refuses %j naming the variable', (raw) => {
    expect(() => parseFlag('ADMIN_INSECURE', raw)).toThrow(
      `ADMIN_INSECURE must be true or false, got "${raw}"`,
    );
  });
});
