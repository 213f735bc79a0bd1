import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Env } from '@app/contracts';
import type { Authenticator, JwtAuth } from 'nats';
import { operatorMode } from '../../../test/support/nats-jwt';
import { makePki, type Pki } from '../../../test/support/pki';
import { natsConnectionOptions } from './connection-options';

const options = (env: Env) => natsConnectionOptions(env, 'ratelimit-test', '_INBOX_test');
const SECRET = 's3cret-Pa55';

let dir: string;
let pki: Pki;
let other: Pki;
let creds: { a: string; b: string; stranger: string };

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nats-options-'));
  pki = makePki(join(dir, 'pki'));
  other = makePki(join(dir, 'other'), 'other-ca');
  const mode = operatorMode((jwt) => file('operator.jwt', jwt));
  creds = { a: mode.userCreds('a'), b: mode.userCreds('b'), stranger: mode.strangerCreds('s') };
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `build` expecting a throw; returns its message. */
function refusal(env: Env): string {
  try {
    options(env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('NATS_URL', () => {
  it("defaults to the local server, named, with the app's inboxes, without auth or TLS", () => {
    expect(options({})).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      name: 'ratelimit-test',
      inboxPrefix: '_INBOX_test',
    });
  });

  it.each(['', '  ', ' , '])('%j: no NATS', (NATS_URL) => {
    expect(options({ NATS_URL })).toBeUndefined();
  });

  it('takes a comma list, trimmed, schemes added where missing', () => {
    expect(options({ NATS_URL: ' nats://a:4222 , b:4223,tls://[::1]:4224 ' })).toMatchObject({
      servers: ['nats://a:4222', 'nats://b:4223', 'tls://[::1]:4224'],
    });
  });

  // nats.js ignores credentials written in a URL: they reached no server before.
  it('reads user:password@ and token@ out of the URLs, which keep only host and port', () => {
    expect(options({ NATS_URL: `nats://alice:${SECRET}@a:4222,nats://alice:${SECRET}@b` })).toEqual(
      {
        servers: ['nats://a:4222', 'nats://b'],
        name: 'ratelimit-test',
        inboxPrefix: '_INBOX_test',
        user: 'alice',
        pass: SECRET,
      },
    );
    expect(options({ NATS_URL: `nats://${SECRET}@a:4222` })).toMatchObject({
      servers: ['nats://a:4222'],
      token: SECRET,
    });
    expect(options({ NATS_URL: 'nats://al%40ce:p%3Ass@a' })).toMatchObject({
      user: 'al@ce',
      pass: 'p:ss',
    });
  });

  it('requires a tls:// server to be reached over TLS', () => {
    expect(options({ NATS_URL: 'tls://a:4222' })).toMatchObject({ tls: {} });
  });

  it.each([
    [`http://u:${SECRET}@a:4222`, 'is not a NATS server URL'],
    ['nats://', 'is not a NATS server URL'],
    ['nats://a:99999', 'is not a NATS server URL'],
    [`nats://u:${SECRET}@a:4222/path`, 'is not a NATS server URL'],
    [`nats://:${SECRET}@a:4222`, 'a password needs a user'],
    [`nats://u:${SECRET}@a,nats://v:${SECRET}@b`, 'the servers carry different credentials'],
  ])('refuses %s naming NATS_URL, without the password', (NATS_URL, why) => {
    const message = refusal({ NATS_URL });
    expect(message).toMatch(/^NATS_URL: /);
    expect(message).toContain(why);
    expect(message).not.toContain(SECRET);
  });
});

describe('NATS_INBOX_PREFIX', () => {
  it("replaces the app's own prefix, trimmed; empty is unset", () => {
    expect(options({ NATS_INBOX_PREFIX: ' acme.rl.inbox ' })?.inboxPrefix).toBe('acme.rl.inbox');
    expect(options({ NATS_INBOX_PREFIX: '' })?.inboxPrefix).toBe('_INBOX_test');
  });

  it.each(['_INBOX.>', 'a.*.b', 'a..b', 'a b', '.a'])(
    'refuses %j, naming the variable',
    (prefix) => {
      expect(refusal({ NATS_INBOX_PREFIX: prefix })).toBe(
        `NATS_INBOX_PREFIX: "${prefix}" must be dot-separated tokens without spaces or wildcards`,
      );
    },
  );
});

describe('authentication', () => {
  it('NATS_TOKEN, and NATS_USER with NATS_PASSWORD, trimmed', () => {
    expect(options({ NATS_TOKEN: ` ${SECRET}\n` })).toMatchObject({ token: SECRET });
    expect(options({ NATS_USER: 'alice', NATS_PASSWORD: SECRET })).toMatchObject({
      user: 'alice',
      pass: SECRET,
    });
  });

  it('treats empty values as unset', () => {
    expect(options({ NATS_TOKEN: '', NATS_USER: ' ', NATS_PASSWORD: '', NATS_CREDS: '' })).toEqual(
      options({}),
    );
  });

  it.each([
    [{ NATS_USER: 'alice' }, 'NATS_USER is set without NATS_PASSWORD'],
    [{ NATS_PASSWORD: SECRET }, 'NATS_PASSWORD is set without NATS_USER'],
    [
      { NATS_TOKEN: SECRET, NATS_USER: 'alice', NATS_PASSWORD: SECRET },
      'NATS_TOKEN and NATS_USER are all set: give one way to authenticate to NATS',
    ],
    [
      { NATS_TOKEN: SECRET, NATS_URL: `nats://u:${SECRET}@a` },
      'NATS_TOKEN and credentials in NATS_URL are all set',
    ],
  ])('refuses %j', (env, message) => {
    const refused = refusal(env);
    expect(refused).toContain(message);
    expect(refused).not.toContain(SECRET);
  });

  describe('NATS_CREDS', () => {
    const jwtOf = (text: string): string => text.split('\n')[1]!;
    const authenticate = (auth: Authenticator | Authenticator[] | undefined): JwtAuth => {
      if (typeof auth !== 'function') throw new Error('no authenticator');
      return auth('nonce') as JwtAuth;
    };

    it('signs with the file, read again at each connection (a rotated Secret is used)', () => {
      const path = file('user.creds', creds.a);
      const auth = options({ NATS_CREDS: path })?.authenticator;
      expect(authenticate(auth)).toMatchObject({ jwt: jwtOf(creds.a) });
      writeFileSync(path, creds.b);
      expect(authenticate(auth)).toMatchObject({ jwt: jwtOf(creds.b) });
    });

    it('refuses NATS_CREDS with another way to authenticate', () => {
      const path = file('other.creds', creds.a);
      expect(refusal({ NATS_CREDS: path, NATS_TOKEN: SECRET })).toContain(
        'NATS_CREDS and NATS_TOKEN are all set',
      );
    });

    it('refuses a file that cannot be read or is not a creds file, naming NATS_CREDS', () => {
      expect(refusal({ NATS_CREDS: join(dir, 'missing.creds') })).toBe(
        `NATS_CREDS: cannot read ${join(dir, 'missing.creds')} (ENOENT)`,
      );
      expect(refusal({ NATS_CREDS: dir })).toContain('(EISDIR)');
      expect(refusal({ NATS_CREDS: file('junk.creds', 'hello\n') })).toMatch(
        /^NATS_CREDS: .* is not a NATS credentials file/,
      );
    });

    it("refuses a seed that is not the JWT's user, without quoting the file", () => {
      const [jwtBlock] = creds.a.split('\n\n');
      const seedBlock = creds.b.slice(creds.b.indexOf('-----BEGIN USER NKEY SEED'));
      const mixed = file('mixed.creds', `${jwtBlock}\n\n${seedBlock}`);
      const message = refusal({ NATS_CREDS: mixed });
      expect(message).toBe(`NATS_CREDS: ${mixed} holds a seed that is not the JWT's user`);
      const damaged = file('damaged.creds', creds.a.replace(/\nSU[A-Z0-9]+\n/, '\nSUXYZ\n'));
      expect(refusal({ NATS_CREDS: damaged })).toContain('holds no valid nkey seed');
    });
  });
});

describe('TLS', () => {
  it('NATS_TLS_CA alone: TLS required, the servers checked against that CA', () => {
    expect(options({ NATS_TLS_CA: pki.ca })).toMatchObject({ tls: { caFile: pki.ca } });
  });

  it('NATS_TLS_CERT and NATS_TLS_KEY: a client certificate, by file name', () => {
    const env = {
      NATS_TLS_CA: pki.ca,
      NATS_TLS_CERT: pki.client.cert,
      NATS_TLS_KEY: pki.client.key,
    };
    expect(options(env)?.tls).toEqual({
      caFile: pki.ca,
      certFile: pki.client.cert,
      keyFile: pki.client.key,
    });
  });

  it.each([
    [{ NATS_TLS_CERT: 'c' }, 'NATS_TLS_CERT is set without NATS_TLS_KEY'],
    [{ NATS_TLS_KEY: 'k' }, 'NATS_TLS_KEY is set without NATS_TLS_CERT'],
  ])('refuses %j', (env, message) => {
    expect(refusal(env)).toContain(message);
  });

  it('refuses files that cannot be read or hold the wrong thing, naming the variable', () => {
    expect(refusal({ NATS_TLS_CA: join(dir, 'nope.pem') })).toMatch(
      /^NATS_TLS_CA: cannot read .*nope\.pem \(ENOENT\)$/,
    );
    expect(refusal({ NATS_TLS_CA: pki.client.key })).toMatch(
      /^NATS_TLS_CA: .* holds no PEM certificate$/,
    );
    expect(refusal({ NATS_TLS_CERT: pki.client.key, NATS_TLS_KEY: pki.client.key })).toMatch(
      /^NATS_TLS_CERT: .* holds no PEM certificate$/,
    );
    expect(refusal({ NATS_TLS_CERT: pki.client.cert, NATS_TLS_KEY: pki.client.cert })).toMatch(
      /^NATS_TLS_KEY: .* holds no PEM private key$/,
    );
  });

  it('refuses a key that is not the certificate’s, or that is encrypted', () => {
    expect(refusal({ NATS_TLS_CERT: pki.client.cert, NATS_TLS_KEY: other.client.key })).toMatch(
      /^NATS_TLS_KEY: .* is not the key of the certificate in NATS_TLS_CERT/,
    );
    const { privateKey } = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: {
        type: 'pkcs8',
        format: 'pem',
        cipher: 'aes-256-cbc',
        passphrase: SECRET,
      },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const encrypted = file('encrypted.key', privateKey);
    expect(refusal({ NATS_TLS_CERT: pki.client.cert, NATS_TLS_KEY: encrypted })).toMatch(
      /^NATS_TLS_KEY: .* is encrypted/,
    );
  });

  it('goes with any way to authenticate', () => {
    expect(options({ NATS_TLS_CA: pki.ca, NATS_TOKEN: SECRET })).toMatchObject({
      token: SECRET,
      tls: { caFile: pki.ca },
    });
  });
});
