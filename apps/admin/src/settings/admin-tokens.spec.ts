import type { Env } from '@app/contracts';
import { readAdminTokens } from './admin-tokens';

const ALICE = 'alice-0123456789abcdef';
const CI = 'ci-0123456789abcdef0000';
const VIEWER = 'viewer-0123456789abcdef';

describe('admin tokens (ADMIN_TOKEN, ADMIN_TOKENS, ADMIN_READ_TOKEN, ADMIN_READ_TOKENS)', () => {
  it('names each token: ADMIN_TOKEN is admin, ADMIN_READ_TOKEN is read, the lists by their names', () => {
    const tokens = readAdminTokens({
      ADMIN_TOKEN: 'short-admin',
      ADMIN_TOKENS: ` alice:${ALICE} , ci:${CI}`,
      ADMIN_READ_TOKEN: 'short-read',
      ADMIN_READ_TOKENS: `grafana:${VIEWER}`,
    });
    expect(tokens.identify('short-admin')).toEqual({ kind: 'admin', name: 'admin' });
    expect(tokens.identify(ALICE)).toEqual({ kind: 'admin', name: 'alice' });
    expect(tokens.identify(CI)).toEqual({ kind: 'admin', name: 'ci' });
    expect(tokens.identify('short-read')).toEqual({ kind: 'read', name: 'read' });
    expect(tokens.identify(VIEWER)).toEqual({ kind: 'read', name: 'grafana' });
    expect(tokens.identify(`${ALICE}x`)).toEqual({ kind: 'unknown', name: undefined });
    expect(tokens.identify(undefined)).toEqual({ kind: 'none', name: undefined });
    expect(tokens).toMatchObject({ guardWrites: true, guardReads: true });
  });

  it.each<[Env, boolean, boolean]>([
    [{}, false, false],
    [{ ADMIN_TOKENS: `alice:${ALICE}` }, true, false],
    [{ ADMIN_READ_TOKENS: `grafana:${VIEWER}` }, false, true],
    [{ ADMIN_TOKEN: ' ', ADMIN_TOKENS: ' ' }, false, false],
  ])('%j guards writes: %s, reads: %s', (env, writes, reads) => {
    expect(readAdminTokens(env)).toMatchObject({ guardWrites: writes, guardReads: reads });
  });

  it.each<[string, Env, string]>([
    [
      'an entry without a colon',
      { ADMIN_TOKENS: ALICE },
      'ADMIN_TOKENS: entry 1 must be name:token',
    ],
    [
      'an empty entry',
      { ADMIN_TOKENS: `alice:${ALICE},` },
      'ADMIN_TOKENS: entry 2 must be name:token',
    ],
    [
      'a name with capitals',
      { ADMIN_READ_TOKENS: `Grafana:${VIEWER}` },
      "ADMIN_READ_TOKENS: entry 1: the name (before the first ':') must be 1..64 characters of [a-z0-9_-]",
    ],
    [
      'the name of requests without a token',
      { ADMIN_TOKENS: `anonymous:${ALICE}` },
      'ADMIN_TOKENS: entry 1: "anonymous" names requests without a token; choose another name',
    ],
    [
      'a short token',
      { ADMIN_TOKENS: 'alice:0123456789' },
      'ADMIN_TOKENS: entry 1: the token of "alice" is 10 characters; give at least 16',
    ],
    [
      'a token with a space',
      { ADMIN_TOKENS: 'alice:0123456789 abcdef' },
      'ADMIN_TOKENS: entry 1: the token of "alice" must be printable ASCII without spaces or commas',
    ],
    [
      'a name twice',
      { ADMIN_TOKENS: `alice:${ALICE}`, ADMIN_READ_TOKENS: `alice:${VIEWER}` },
      'ADMIN_READ_TOKENS: the name "alice" is given twice (also in ADMIN_TOKENS)',
    ],
    [
      'the name of ADMIN_TOKEN again',
      { ADMIN_TOKEN: 'x', ADMIN_TOKENS: `admin:${ALICE}` },
      'ADMIN_TOKENS: the name "admin" is given twice (also in ADMIN_TOKEN)',
    ],
    [
      'a token twice',
      { ADMIN_TOKENS: `alice:${ALICE}`, ADMIN_READ_TOKENS: `grafana:${ALICE}` },
      'ADMIN_READ_TOKENS: the token of "grafana" is also the token of "alice" (ADMIN_TOKENS)',
    ],
    [
      'ADMIN_READ_TOKEN equal to ADMIN_TOKEN',
      { ADMIN_TOKEN: 'same', ADMIN_READ_TOKEN: 'same' },
      'ADMIN_READ_TOKEN: the token of "read" is also the token of "admin" (ADMIN_TOKEN)',
    ],
  ])('refuses %s, naming the variable and never the token', (_case, env, message) => {
    let thrown: unknown;
    try {
      readAdminTokens(env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    const text = (thrown as Error).message;
    expect(text).toContain(message);
    for (const secret of [ALICE, VIEWER, '0123456789']) expect(text).not.toContain(secret);
  });
});
