import { createUser } from 'nkeys.js';
import { readLimiterSettings } from './limiter-settings';
import { limiterSigningWarning } from './limiter-signing';

const pair = () => {
  const kp = createUser();
  return { seed: new TextDecoder().decode(kp.getSeed()), publicKey: kp.getPublicKey() };
};

describe("the limiter's control keys", () => {
  const admin = pair();
  const own = pair();
  const peer = pair();

  it('trusts the admin key, signs with its seed and counts reports of its own key and the listed', () => {
    const { signing } = readLimiterSettings({
      CONTROL_PUBLIC_KEY: admin.publicKey,
      REPORT_SEED: own.seed,
      REPORT_PUBLIC_KEYS: peer.publicKey,
    });
    expect(signing.controlKey?.publicKey).toBe(admin.publicKey);
    expect(signing.reportSeed?.publicKey).toBe(own.publicKey);
    expect(signing.reportKeys.map((k) => k.publicKey)).toEqual([peer.publicKey, own.publicKey]);
    expect(limiterSigningWarning(signing)).toBeUndefined();
  });

  it('without keys: nothing checked, and one warning saying what is open', () => {
    const { signing } = readLimiterSettings({});
    expect(signing).toEqual({ controlKey: undefined, reportSeed: undefined, reportKeys: [] });
    expect(limiterSigningWarning(signing)).toMatch(
      /^control is unauthenticated: CONTROL_PUBLIC_KEY is not set.*REPORT_SEED is not set.*any client's stats report counts/,
    );
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'a seed as CONTROL_PUBLIC_KEY',
      { CONTROL_PUBLIC_KEY: admin.seed },
      /^CONTROL_PUBLIC_KEY: a seed is a seed/,
    ],
    [
      'a public key as REPORT_SEED',
      { REPORT_SEED: own.publicKey },
      /^REPORT_SEED must be an nkeys seed/,
    ],
    [
      'a bad item of REPORT_PUBLIC_KEYS',
      { REPORT_PUBLIC_KEYS: `${peer.publicKey},UABC` },
      /^REPORT_PUBLIC_KEYS: item 2/,
    ],
  ])('stops at start on %s, naming the variable', (_, env, message) => {
    expect(() => readLimiterSettings(env)).toThrow(message);
  });
});
