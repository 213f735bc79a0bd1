import { createAccount, createUser, fromPublic, fromSeed } from 'nkeys.js';
import {
  readPublicKey,
  readPublicKeys,
  readSeed,
  signingKeyOf,
  verifyKeyOf,
  type SigningKey,
} from './control-keys';
import {
  signatureLine,
  signValue,
  splitValue,
  trustedKeys,
  verifyLine,
  type Refusal,
} from './control-signature';
import { ControlSequence } from './control-sequence';
import {
  rememberingOpener,
  UNVERIFIED_OPENER,
  verifyingOpener,
  type EntryOpener,
} from './entry-opener';
import { FreshNonces, MessageVerifier, signMessage } from './signed-messages';

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const seedOf = (pair = createUser()): string => text(pair.getSeed());

const admin = signingKeyOf(seedOf());
const other = signingKeyOf(seedOf());
const BUCKET = 'ratelimit_v1_control';
const KEY = 'quota.617069';
const PAYLOAD = '{"spec":{"name":"api"},"version":1,"updatedAt":1}';

describe('control keys: nkeys text read into native ed25519 keys', () => {
  it('reads a user seed and an account seed, and derives the public key nkeys derives', () => {
    for (const pair of [createUser(), createAccount()]) {
      const key = signingKeyOf(text(pair.getSeed()));
      expect(key.publicKey).toBe(pair.getPublicKey());
      expect(verifyKeyOf(pair.getPublicKey()).publicKey).toBe(pair.getPublicKey());
    }
  });

  it('signs as nkeys.js signs, and each verifies the other', () => {
    const pair = createUser();
    const key = signingKeyOf(text(pair.getSeed()));
    const line = signatureLine(key, { kind: 'msg', subject: 's' }, 5, 'body', 'AAAAAAAAAAAAAAAA');
    const signed = Buffer.from(`RLS1\n${key.publicKey}\nmsg\ns\n5\nAAAAAAAAAAAAAAAA\nbody`);
    const native = Buffer.from(line.split(' ')[4]!, 'base64url');
    expect(Buffer.from(pair.sign(signed)).equals(native)).toBe(true);
    expect(fromPublic(pair.getPublicKey()).verify(signed, native)).toBe(true);
  });

  const seed = seedOf();
  const publicKey = fromSeed(new TextEncoder().encode(seed)).getPublicKey();
  const badCrc = seed.slice(0, -2) + (seed.endsWith('AA') ? 'BB' : 'AA');

  it.each<[string, () => unknown, RegExp]>([
    [
      'a public key as a seed',
      () => readSeed('CONTROL_SEED', publicKey),
      /^CONTROL_SEED must be an nkeys seed/,
    ],
    [
      'a seed with a wrong checksum',
      () => readSeed('REPORT_SEED', badCrc),
      /^REPORT_SEED is not a valid nkeys seed/,
    ],
    [
      'a word as a seed',
      () => readSeed('CONTROL_SEED', 'secret'),
      /^CONTROL_SEED must be an nkeys seed/,
    ],
    [
      'a seed as a public key',
      () => readPublicKey('CONTROL_PUBLIC_KEY', seed),
      /^CONTROL_PUBLIC_KEY: a seed is a seed, a secret/,
    ],
    [
      'a damaged public key',
      () => readPublicKey('CONTROL_PUBLIC_KEY', `${publicKey.slice(0, -1)}A`),
      /^CONTROL_PUBLIC_KEY: ".*" is not a valid nkeys public key/,
    ],
    [
      'a list with a bad second item',
      () => readPublicKeys('REPORT_PUBLIC_KEYS', `${publicKey},nope`),
      /^REPORT_PUBLIC_KEYS: item 2 \("nope"\) is not a valid/,
    ],
  ])('refuses %s, naming the variable and never the seed', (_, read, message) => {
    let error: Error | undefined;
    try {
      read();
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toContain(seed);
    expect(error?.message).not.toContain(badCrc);
  });

  it('reads unset or empty as none, and trims', () => {
    expect(readSeed('CONTROL_SEED', undefined)).toBeUndefined();
    expect(readSeed('CONTROL_SEED', '  ')).toBeUndefined();
    expect(readPublicKeys('REPORT_PUBLIC_KEYS', '')).toEqual([]);
    expect(readSeed('CONTROL_SEED', ` ${seed}\n`)?.publicKey).toBe(publicKey);
    const keys = readPublicKeys('REPORT_PUBLIC_KEYS', ` ${publicKey} ,${admin.publicKey},`);
    expect(keys.map((k) => k.publicKey)).toEqual([publicKey, admin.publicKey]);
  });
});

describe('signed KV values', () => {
  const put = { kind: 'put', bucket: BUCKET, key: KEY } as const;
  const del = { kind: 'del', bucket: BUCKET, key: KEY } as const;
  const opener = verifyingOpener(BUCKET, admin);
  const signed = signValue(admin, put, 7, PAYLOAD);
  const line = splitValue(signed).line!;

  it.each<[string, 'put' | 'del', string, string, Refusal | 'ok']>([
    ['signed by the admin', 'put', KEY, signed, 'ok'],
    ['a plain value', 'put', KEY, PAYLOAD, 'unsigned'],
    ['signed by another key', 'put', KEY, signValue(other, put, 7, PAYLOAD), 'unknown-key'],
    [
      'its payload changed',
      'put',
      KEY,
      signed.replace('"version":1', '"version":2'),
      'bad-signature',
    ],
    ['moved to another key', 'put', 'quota.626164', signed, 'bad-signature'],
    [
      'signed for another bucket',
      'put',
      KEY,
      signValue(admin, { ...put, bucket: 'b' }, 7, PAYLOAD),
      'bad-signature',
    ],
    ['a put given as a delete', 'del', KEY, signed, 'bad-signature'],
    ['a signed delete', 'del', KEY, `${signatureLine(admin, del, 8, '')}\n`, 'ok'],
    ['an unsigned delete', 'del', KEY, '', 'unsigned'],
    [
      'a delete signed for another key',
      'del',
      KEY,
      `${signatureLine(admin, { ...del, key: 'quota.00' }, 8, '')}\n`,
      'bad-signature',
    ],
    ['a truncated signature', 'put', KEY, signed.replace(line, line.slice(0, -3)), 'bad-signature'],
    ['a signature line with no payload after it', 'put', KEY, line, 'bad-signature'],
    ['a sequence that is not a number', 'put', KEY, signed.replace(' 7 ', ' x7 '), 'bad-signature'],
  ])('%s', (_, op, key, raw, expected) => {
    const opened = opener.open(op, key, raw);
    expect(opened.ok ? 'ok' : opened.refusal).toBe(expected);
    if (opened.ok && op === 'put')
      expect(opened).toMatchObject({ payload: PAYLOAD, line: { seq: 7 } });
  });

  it('remembering: checks a value once, a new one again, and a refused one every time', () => {
    let checked = 0;
    const counting: EntryOpener = {
      verifies: true,
      open: (...args) => (checked++, opener.open(...args)),
    };
    const remembering = rememberingOpener(counting);
    const again = signValue(admin, put, 8, PAYLOAD);
    const outcomes = [signed, signed, again, again, signed, PAYLOAD, PAYLOAD].map(
      (raw) => remembering.open('put', KEY, raw).ok,
    );
    expect(outcomes).toEqual([true, true, true, true, true, false, false]);
    expect(checked).toBe(5);
    // A delete with the same body as a put is another write.
    expect(remembering.open('del', KEY, signed).ok).toBe(false);
    // What the writer signed itself is taken unchecked, as signed.
    const own = signValue(admin, put, 9, PAYLOAD);
    remembering.remember('put', KEY, own);
    const before = checked;
    expect(remembering.open('put', KEY, own)).toMatchObject({
      ok: true,
      payload: PAYLOAD,
      line: { seq: 9 },
    });
    expect(checked).toBe(before);
  });

  it('without a key, takes every value and sets a signature line aside unchecked', () => {
    expect(UNVERIFIED_OPENER.open('put', KEY, PAYLOAD)).toEqual({ ok: true, payload: PAYLOAD });
    expect(UNVERIFIED_OPENER.open('put', KEY, signValue(other, put, 1, PAYLOAD))).toEqual({
      ok: true,
      payload: PAYLOAD,
    });
    expect(UNVERIFIED_OPENER.open('del', KEY, '')).toEqual({ ok: true, payload: '' });
  });

  it('verifies bytes as sent: a payload that is not UTF-8 does not verify', () => {
    const key: SigningKey = admin;
    const bytes = Buffer.from([0x7b, 0xff, 0x7d]);
    const l = signatureLine(key, put, 3, bytes);
    expect(verifyLine(l, put, bytes, trustedKeys([key])).ok).toBe(true);
    expect(verifyLine(l, put, bytes.toString('utf8'), trustedKeys([key])).ok).toBe(false);
  });
});

describe('signed messages: requests and reports', () => {
  const NOW = 1_800_000_000_000;
  const body = Buffer.from('{"key":"k"}');
  const subject = 'ratelimit.v1.control.reset';

  it.each<[string, (v: MessageVerifier) => unknown, Refusal | 'ok']>([
    [
      'fresh and signed',
      (v) => v.check(signMessage(admin, subject, [], body, NOW), subject, [], body, NOW),
      'ok',
    ],
    ['unsigned', (v) => v.check(undefined, subject, [], body, NOW), 'unsigned'],
    [
      'signed by another key',
      (v) => v.check(signMessage(other, subject, [], body, NOW), subject, [], body, NOW),
      'unknown-key',
    ],
    [
      'sent on another subject',
      (v) => v.check(signMessage(admin, 'x.control.reset', [], body, NOW), subject, [], body, NOW),
      'bad-signature',
    ],
    [
      'a header changed',
      (v) =>
        v.check(
          signMessage(admin, subject, ['r1', 'q'], body, NOW),
          subject,
          ['r1', 'other'],
          body,
          NOW,
        ),
      'bad-signature',
    ],
    [
      '31 s old',
      (v) => v.check(signMessage(admin, subject, [], body, NOW - 31_000), subject, [], body, NOW),
      'stale',
    ],
    [
      '31 s ahead',
      (v) => v.check(signMessage(admin, subject, [], body, NOW + 31_000), subject, [], body, NOW),
      'stale',
    ],
    [
      '29 s old (clocks apart)',
      (v) => v.check(signMessage(admin, subject, [], body, NOW - 29_000), subject, [], body, NOW),
      'ok',
    ],
  ])('%s', (_, check, expected) => {
    const outcome = check(new MessageVerifier([admin])) as { ok: boolean; refusal?: Refusal };
    expect(outcome.ok ? 'ok' : outcome.refusal).toBe(expected);
  });

  it('takes a message once: the same one again is a replay, also later in the window', () => {
    const verifier = new MessageVerifier([admin]);
    const line = signMessage(admin, subject, [], body, NOW);
    expect(verifier.check(line, subject, [], body, NOW).ok).toBe(true);
    expect(verifier.check(line, subject, [], body, NOW + 1)).toMatchObject({ refusal: 'replayed' });
    expect(verifier.check(line, subject, [], body, NOW + 29_000)).toMatchObject({
      refusal: 'replayed',
    });
    expect(verifier.check(line, subject, [], body, NOW + 31_000)).toMatchObject({
      refusal: 'stale',
    });
  });

  it('remembers nonces until they could not be fresh, in bounded number', () => {
    const nonces = new FreshNonces(1_000, 3);
    expect(['a', 'b', 'c'].map((n) => nonces.take(n, NOW, NOW).ok)).toEqual([true, true, true]);
    expect(nonces.take('d', NOW, NOW)).toMatchObject({ ok: false, refusal: 'replayed' });
    expect(nonces.take('d', NOW + 1_001, NOW + 2_000).ok).toBe(true);
    expect(nonces.size).toBe(1);
    // A clock set back does not make a forgotten nonce fresh again.
    expect(nonces.take('a', NOW, NOW + 900)).toMatchObject({ ok: false, refusal: 'stale' });
  });

  it('refuses one signed a whole window before the latest instant: it would be forgotten as taken', () => {
    const nonces = new FreshNonces(1_000, 3);
    expect(nonces.take('edge', NOW, NOW + 1_000)).toMatchObject({ ok: false, refusal: 'stale' });
    expect(nonces.take('edge', NOW, NOW + 1_000)).toMatchObject({ ok: false, refusal: 'stale' });
    expect(nonces.take('inside', NOW + 1, NOW + 1_000).ok).toBe(true);
    expect(nonces.take('inside', NOW + 1, NOW + 1_000)).toMatchObject({ refusal: 'replayed' });
  });
});

describe('ControlSequence', () => {
  it('follows the clock in microseconds, never goes back, and rises past what it saw', () => {
    const sequence = new ControlSequence();
    expect(sequence.next(1_000)).toBe(1_000_000);
    expect(sequence.next(1_000)).toBe(1_000_001);
    expect(sequence.next(999)).toBe(1_000_002);
    sequence.raise(5_000_000);
    expect(sequence.next(1_001)).toBe(5_000_001);
    expect(sequence.next(6_000)).toBe(6_000_000);
  });
});
