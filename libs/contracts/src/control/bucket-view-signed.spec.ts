import { createUser } from 'nkeys.js';
import { BucketView, type BucketViewOptions } from './bucket-view';
import { CHANGE_COMMIT_KEY, changePartKey, encodeChange, type ChangeOp } from './control-change';
import { signingKeyOf } from './signing/control-keys';
import { signatureLine, signValue, type Refusal } from './signing/control-signature';
import { verifyingOpener, type EntryOpener } from './signing/entry-opener';

const BUCKET = 'b_control';
const seedOf = (): string => new TextDecoder().decode(createUser().getSeed());
const admin = signingKeyOf(seedOf());
const stranger = signingKeyOf(seedOf());

const put = (key: string, seq: number, payload: string, by = admin): string =>
  signValue(by, { kind: 'put', bucket: BUCKET, key }, seq, payload);
const del = (key: string, seq: number, by = admin): string =>
  `${signatureLine(by, { kind: 'del', bucket: BUCKET, key }, seq, '')}\n`;

const reader = (key: string, raw: string) =>
  raw === 'bad' ? { ok: false as const, reason: `${key}: bad` } : { ok: true as const, value: raw };

function signedView(options: Partial<BucketViewOptions> = {}) {
  const refused: [Refusal, string][] = [];
  const view = new BucketView<string>(reader, {
    opener: verifyingOpener(BUCKET, admin),
    onRefused: (refusal, _reason, key) => refused.push([refusal, key]),
    ...options,
  });
  return { view, refused };
}

const served = (view: BucketView<string>): Record<string, string> =>
  Object.fromEntries([...view.entries].map(([key, held]) => [key, held.raw]));

/** The admin's opener, counting the values it opens (each one a signature checked). */
function countingOpener(): { opener: EntryOpener; opened: number } {
  const verifying = verifyingOpener(BUCKET, admin);
  const counting = {
    opened: 0,
    opener: {
      verifies: true,
      open: (...args: Parameters<EntryOpener['open']>) => {
        counting.opened++;
        return verifying.open(...args);
      },
    },
  };
  return counting;
}

/** A change signed as the admin writes it: parts at `seq`, `seq + 1`, …, the commit after. */
function signedChange(id: string, ops: readonly ChangeOp[], seq: number): [string, string][] {
  const { parts, commit } = encodeChange(id, ops, 60);
  const writes = parts.map((part, i): [string, string] => [
    changePartKey(i),
    put(changePartKey(i), seq + i, part),
  ]);
  writes.push([CHANGE_COMMIT_KEY, put(CHANGE_COMMIT_KEY, seq + parts.length, commit)]);
  return writes;
}

describe('BucketView with a verifying opener', () => {
  it('serves what the admin signed and refuses the rest, keeping the last good value', () => {
    const { view, refused } = signedView();
    expect(view.put('quota.a', put('quota.a', 10, 'v1'))).toEqual([]);
    view.put('quota.a', 'forged');
    view.put('quota.a', put('quota.a', 11, 'v2', stranger));
    view.put('quota.b', 'forged');
    view.remove('quota.a', '');
    expect(served(view)).toEqual({ 'quota.a': 'v1' });
    expect(refused).toEqual([
      ['unsigned', 'quota.a'],
      ['unknown-key', 'quota.a'],
      ['unsigned', 'quota.b'],
      ['unsigned', 'quota.a'],
    ]);
    view.remove('quota.a', del('quota.a', 12));
    expect(served(view)).toEqual({});
  });

  it('refuses an older signed write of a key: a replay rolls nothing back, deleted or not', () => {
    const { view, refused } = signedView();
    const v1 = put('quota.a', 10, 'limit 5');
    view.put('quota.a', v1);
    view.put('quota.a', put('quota.a', 20, 'limit 7'));
    view.put('quota.a', v1);
    expect(served(view)).toEqual({ 'quota.a': 'limit 7' });
    // Deleted, then created again (its version starts at 1 again): the old value stays refused.
    view.remove('quota.a', del('quota.a', 30));
    view.put('quota.a', v1);
    view.put('quota.a', put('quota.a', 40, 'limit 9'));
    view.put('quota.a', v1);
    view.remove('quota.a', del('quota.a', 30));
    expect(served(view)).toEqual({ 'quota.a': 'limit 9' });
    expect(refused.map(([refusal]) => refusal)).toEqual([
      'replayed',
      'replayed',
      'replayed',
      'replayed',
    ]);
  });

  it('takes the same signed value again (a watch replaying) without verifying it again', () => {
    const counting = countingOpener();
    const { view } = signedView({ opener: counting.opener });
    const value = put('quota.a', 10, 'v1');
    view.put('quota.a', value);
    view.beginReplay();
    view.put('quota.a', value);
    expect(view.endReplay()).toEqual([]);
    expect(counting.opened).toBe(1);
    expect(view.takeChanged()).toBe(true);
    expect(view.takeChanged()).toBe(false);
  });

  it("with skipUnchanged, an entry rewritten as it is in force (the admin's settle) is not verified", () => {
    const counting = countingOpener();
    const { view } = signedView({ opener: counting.opener, skipUnchanged: true });
    const change = signedChange(
      'c',
      [
        ['quota.a', 'a1'],
        ['quota.b', 'b1'],
      ],
      100,
    );
    for (const [key, value] of change) view.put(key, value);
    const checked = counting.opened;
    expect(checked).toBe(change.length);
    view.put('quota.a', put('quota.a', 200, 'a1'));
    view.put('quota.b', 'b1');
    expect(counting.opened).toBe(checked);
    view.put('quota.b', put('quota.b', 201, 'b2'));
    view.put('quota.a', 'forged');
    expect(counting.opened).toBe(checked + 2);
    expect(served(view)).toEqual({ 'quota.a': 'a1', 'quota.b': 'b2' });
  });

  it('applies a signed change at its commit; a replayed old commit applies nothing', () => {
    const { view, refused } = signedView();
    const first = signedChange(
      'c1',
      [
        ['quota.a', 'a1'],
        ['quota.b', 'b1'],
      ],
      100,
    );
    for (const [key, value] of first) expect(view.put(key, value)).toEqual([]);
    expect(served(view)).toEqual({ 'quota.a': 'a1', 'quota.b': 'b1' });
    // The settle: the same entries under their own keys, the commit deleted.
    view.put('quota.a', put('quota.a', 200, 'a1'));
    view.put('quota.b', put('quota.b', 201, 'b1'));
    view.remove(CHANGE_COMMIT_KEY, del(CHANGE_COMMIT_KEY, 202));
    view.put('quota.a', put('quota.a', 300, 'a2'));
    // Someone puts the first change back: its parts are older than the slots' deletes too.
    for (const [key, value] of first) view.put(key, value);
    expect(served(view)).toEqual({ 'quota.a': 'a2', 'quota.b': 'b1' });
    expect(refused.at(-1)).toEqual(['replayed', CHANGE_COMMIT_KEY]);
  });

  it("a commit's writes do not override a single write signed after it", () => {
    const { view } = signedView();
    view.put('quota.a', put('quota.a', 500, 'newer'));
    for (const [key, value] of signedChange(
      'c',
      [
        ['quota.a', 'older'],
        ['quota.b', 'b'],
      ],
      100,
    )) {
      view.put(key, value);
    }
    expect(served(view)).toEqual({ 'quota.a': 'newer', 'quota.b': 'b' });
  });

  it('holds at most the parts its limits allow: past them the change is dropped, not applied', () => {
    const { view } = signedView({ partLimits: { parts: 2, chars: 1_000_000 } });
    const ops: ChangeOp[] = Array.from({ length: 12 }, (_, i) => [`quota.${i}`, `value-${i}`]);
    const writes = signedChange('big', ops, 100);
    expect(writes.length).toBeGreaterThan(4);
    const problems = writes.flatMap(([key, value]) => view.put(key, value));
    expect(problems[0]).toMatch(/2 change parts .* held already, at most 2 parts .* all dropped/);
    expect(problems.at(-1)).toMatch(
      /^change big: part 0 of \d+ is missing: the change is not applied/,
    );
    expect(served(view)).toEqual({});

    const small = signedView({ partLimits: { parts: 100, chars: 150 } }).view;
    const bytes = signedChange('chars', ops, 100).flatMap(([key, value]) => small.put(key, value));
    expect(bytes[0]).toMatch(/held already, at most 100 parts and 150 characters/);
  });
});
