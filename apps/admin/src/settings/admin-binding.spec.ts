import type { Env } from '@app/contracts';
import { isLoopback } from './admin-binding';
import { readAdminSettings } from './admin-settings';

const TOKEN = { ADMIN_TOKEN: 'admin-secret' };
const READ = { ADMIN_READ_TOKEN: 'read-secret' };
const INSECURE = { ADMIN_INSECURE: 'true' };
const REFUSED = /^HOST=(\S+) without ADMIN_TOKEN or ADMIN_TOKENS .*ADMIN_INSECURE=true/;

describe('where the admin listens (HOST, tokens, ADMIN_INSECURE)', () => {
  // [case, environment, address bound, warning logged]
  it.each<[string, Env, string, RegExp | undefined]>([
    ['no HOST, no token', {}, '127.0.0.1', /^no admin token is set.*on 127\.0\.0\.1 only/],
    ['no HOST, ADMIN_TOKEN', TOKEN, '0.0.0.0', undefined],
    ['no HOST, both tokens', { ...TOKEN, ...READ }, '0.0.0.0', undefined],
    ['no HOST, ADMIN_TOKENS', { ADMIN_TOKENS: 'ci:0123456789abcdef' }, '0.0.0.0', undefined],
    [
      'no HOST, ADMIN_READ_TOKENS only',
      { ADMIN_READ_TOKENS: 'g:0123456789abcdef' },
      '127.0.0.1',
      /^no admin token/,
    ],
    ['no HOST, ADMIN_READ_TOKEN only', READ, '127.0.0.1', /^no admin token is set/],
    ['no HOST, no token, insecure', INSECURE, '127.0.0.1', /^no admin token is set/],
    ['empty HOST and token', { HOST: ' ', ADMIN_TOKEN: ' ' }, '127.0.0.1', /ADMIN_TOKEN/],
    ['HOST=127.0.0.1, no token', { HOST: '127.0.0.1' }, '127.0.0.1', /on 127\.0\.0\.1 only/],
    ['HOST=127.0.0.2, no token', { HOST: '127.0.0.2' }, '127.0.0.2', /on 127\.0\.0\.2 only/],
    ['HOST=::1, no token', { HOST: '::1' }, '::1', /on ::1 only/],
    ['HOST=localhost, no token', { HOST: 'localhost' }, 'localhost', /on localhost only/],
    ['HOST=0.0.0.0, ADMIN_TOKEN', { HOST: '0.0.0.0', ...TOKEN }, '0.0.0.0', undefined],
    ['HOST=10.1.2.3, ADMIN_TOKEN', { HOST: '10.1.2.3', ...TOKEN }, '10.1.2.3', undefined],
    ['HOST=127.0.0.1, ADMIN_TOKEN', { HOST: '127.0.0.1', ...TOKEN }, '127.0.0.1', undefined],
    ['HOST=0.0.0.0, insecure', { HOST: '0.0.0.0', ...INSECURE }, '0.0.0.0', /^INSECURE: /],
    ['HOST=::, insecure', { HOST: '::', ...INSECURE }, '::', /anyone who reaches :: /],
    [
      'HOST=0.0.0.0, read token, insecure',
      { HOST: '0.0.0.0', ...READ, ...INSECURE },
      '0.0.0.0',
      /^INSECURE: /,
    ],
  ])('%s', (_case, env, host, warning) => {
    const settings = readAdminSettings(env);
    expect(settings.listen.host).toBe(host);
    if (warning === undefined) expect(settings.listenWarning).toBeUndefined();
    else expect(settings.listenWarning).toMatch(warning);
  });

  // [case, environment]
  it.each<[string, Env]>([
    ['HOST=0.0.0.0, no token', { HOST: '0.0.0.0' }],
    ['HOST=::, no token', { HOST: '::' }],
    ['HOST=10.1.2.3, no token', { HOST: '10.1.2.3' }],
    ['HOST=admin.internal, no token', { HOST: 'admin.internal' }],
    ['HOST=::ffff:10.0.0.1, no token', { HOST: '::ffff:10.0.0.1' }],
    ['HOST=0.0.0.0, ADMIN_READ_TOKEN only', { HOST: '0.0.0.0', ...READ }],
    ['HOST=0.0.0.0, ADMIN_INSECURE=false', { HOST: '0.0.0.0', ADMIN_INSECURE: 'false' }],
  ])('%s: refuses to start', (_case, env) => {
    expect(() => readAdminSettings(env)).toThrow(REFUSED);
    expect(() => readAdminSettings(env)).toThrow(`HOST=${env.HOST} `);
  });

  it('refuses an ADMIN_INSECURE that is not a flag, naming it', () => {
    expect(() => readAdminSettings({ HOST: '0.0.0.0', ADMIN_INSECURE: 'yes' })).toThrow(
      'ADMIN_INSECURE must be true or false, got "yes"',
    );
  });

  it('leaves the port and log level to ADMIN_PORT and LOG_LEVEL', () => {
    const { listen } = readAdminSettings({ ADMIN_PORT: '9001', LOG_LEVEL: 'silent' });
    expect(listen).toMatchObject({ host: '127.0.0.1', port: 9001, logLevel: 'silent' });
  });
});

describe('isLoopback', () => {
  it.each(['127.0.0.1', '127.9.8.7', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'LOCALHOST'])(
    '%s is loopback',
    (host) => expect(isLoopback(host)).toBe(true),
  );

  it.each(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'fe80::1', 'localhost.example', '[::1]'])(
    '%s is not',
    (host) => expect(isLoopback(host)).toBe(false),
  );
});
