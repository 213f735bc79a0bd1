import { readOriginPolicy, requestRefusal, type OriginPolicy } from './origin-policy';

const PORT = 8081;
const LOOPBACK: OriginPolicy = { loopback: true, allowed: [] };
const ELSEWHERE: OriginPolicy = { loopback: false, allowed: [] };
const PROXIED: OriginPolicy = { loopback: true, allowed: ['https://admin.example.com'] };

const ask = (policy: OriginPolicy, host: string | undefined, origin?: string) =>
  requestRefusal(policy, { host, origin, port: PORT });

describe('which requests an admin on loopback answers (DNS rebinding)', () => {
  it.each(['localhost:8081', 'LOCALHOST:8081', '127.0.0.1:8081', '127.1.2.3:8081', '[::1]:8081'])(
    'answers Host %s',
    (host) => {
      expect(ask(LOOPBACK, host)).toBeUndefined();
      expect(ask(LOOPBACK, host, `http://${host.toLowerCase()}`)).toBeUndefined();
    },
  );

  it.each([
    'attacker.example:8081',
    'attacker.example',
    'localhost.attacker.example:8081',
    '127.0.0.1.nip.io:8081',
    'localhost:8082',
    'localhost',
    '127.0.0.1:80',
    '10.0.0.1:8081',
    '[::2]:8081',
    'localhost:8081:8081',
    '',
  ])('refuses Host %j, saying why', (host) => {
    expect(ask(LOOPBACK, host)).toMatch(/is refused: this admin listens on loopback/);
  });

  it('refuses a request without Host', () => {
    expect(ask(LOOPBACK, undefined)).toMatch(/^A request without Host is refused/);
  });

  it('takes a Host without port as port 80', () => {
    expect(requestRefusal(LOOPBACK, { host: 'localhost', origin: undefined, port: 80 })).toBe(
      undefined,
    );
  });

  it('answers the names of ADMIN_ALLOWED_ORIGINS, from those origins', () => {
    expect(ask(PROXIED, 'admin.example.com', 'https://admin.example.com')).toBeUndefined();
    expect(ask(PROXIED, '127.0.0.1:8081', 'https://admin.example.com')).toBeUndefined();
    expect(ask(PROXIED, 'other.example.com')).toMatch(/is refused/);
  });
});

describe('which Origin may call the admin, wherever it listens', () => {
  it.each([LOOPBACK, ELSEWHERE])('a request without Origin (curl, the SDK) goes on', (policy) => {
    expect(ask(policy, 'localhost:8081')).toBeUndefined();
  });

  it.each([
    ['another site', 'http://attacker.example'],
    ['another port of the same host', 'http://localhost:3000'],
    ['another loopback name', 'http://127.0.0.1:8081'],
    ['a sandboxed page', 'null'],
    ['a file', 'file://'],
    ['not a URL', 'x'],
    ['a path', 'http://localhost:8081/graphql'],
  ])('refuses %s', (_what, origin) => {
    expect(ask(LOOPBACK, 'localhost:8081', origin)).toMatch(
      /^Origin ".*" is refused: only the admin's own pages/,
    );
    expect(ask(ELSEWHERE, 'localhost:8081', origin)).toMatch(/is refused/);
  });

  it('takes the same origin over http or https (a TLS proxy that keeps Host)', () => {
    expect(ask(ELSEWHERE, 'admin.internal', 'https://admin.internal')).toBeUndefined();
    expect(ask(ELSEWHERE, 'admin.internal:8081', 'http://admin.internal:8081')).toBeUndefined();
  });

  it('does not check Host when bound elsewhere: names are the operator’s', () => {
    expect(ask(ELSEWHERE, 'attacker.example:8081')).toBeUndefined();
  });
});

describe('ADMIN_ALLOWED_ORIGINS', () => {
  it('reads a comma list of origins as browsers send them, and knows loopback', () => {
    expect(
      readOriginPolicy(
        {
          ADMIN_ALLOWED_ORIGINS:
            ' https://Admin.Example.com/ , http://localhost:80,http://[::1]:9000',
        },
        '127.0.0.1',
      ),
    ).toEqual({
      loopback: true,
      allowed: ['https://admin.example.com', 'http://localhost', 'http://[::1]:9000'],
    });
    expect(readOriginPolicy({}, '0.0.0.0')).toEqual({ loopback: false, allowed: [] });
    expect(readOriginPolicy({}, '::1')).toEqual({ loopback: true, allowed: [] });
  });

  it.each([
    'admin.example.com',
    'ftp://admin.example.com',
    'https://admin.example.com/x',
    'https://u@h',
    '',
  ])('refuses %j, naming the variable', (entry) => {
    expect(() =>
      readOriginPolicy({ ADMIN_ALLOWED_ORIGINS: `https://ok.example,${entry}` }, '127.0.0.1'),
    ).toThrow(
      /^ADMIN_ALLOWED_ORIGINS: ".*" must be an origin such as https:\/\/admin\.example\.com/,
    );
  });
});
