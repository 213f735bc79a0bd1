import { BucketView } from './bucket-view';
import {
  CHANGE_COMMIT_KEY,
  changePartKey,
  encodeChange,
  readChangeCommit,
  readChangePart,
  type ChangeOp,
} from './control-change';

/** Takes every value except "bad". */
const reader = (key: string, raw: string) =>
  raw === 'bad' ? { ok: false as const, reason: `${key}: bad` } : { ok: true as const, value: raw };

type Write = readonly [key: string, value: string | null];

function feed(view: BucketView<string>, writes: readonly Write[]): string[] {
  const problems: string[] = [];
  for (const [key, value] of writes) {
    if (value === null) view.remove(key);
    else problems.push(...view.put(key, value));
  }
  return problems;
}

/** The writes a change puts in the bucket: its parts, then its commit. */
function change(id: string, ops: readonly ChangeOp[], partBytes = 60): Write[] {
  const { parts, commit } = encodeChange(id, ops, partBytes);
  return [...parts.map((part, i): Write => [changePartKey(i), part]), [CHANGE_COMMIT_KEY, commit]];
}

const served = (view: BucketView<string>): Record<string, string> =>
  Object.fromEntries([...view.entries].map(([key, held]) => [key, held.raw]));

describe('encodeChange', () => {
  it('packs the writes in order into parts of at most the given size, and commits them', () => {
    const ops: ChangeOp[] = Array.from({ length: 50 }, (_, i) => [`quota.${i}`, `v${i}`]);
    ops.push(['quota.gone', null]);
    const { parts, commit } = encodeChange('c1', ops, 200);
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(200);
    const read = parts.map((part, i) => readChangePart(changePartKey(i), part));
    const back = read.flatMap((r) => (r.ok ? r.value.ops : []));
    expect(back).toEqual(ops);
    expect(readChangeCommit(commit)).toEqual({
      ok: true,
      value: { id: 'c1', parts: parts.length, ops: 51 },
    });
  });

  it('gives an op larger than a part a part of its own', () => {
    const big = 'x'.repeat(500);
    const { parts } = encodeChange(
      'c',
      [
        ['a', 'small'],
        ['b', big],
        ['c', 'small'],
      ],
      100,
    );
    expect(parts).toHaveLength(3);
    expect(parts[1]).toContain(big);
  });
});

describe('readChangePart and readChangeCommit', () => {
  it.each<[string, string, string]>([
    ['not JSON', '{', 'is not JSON'],
    ['wrong index', '{"id":"c","index":1,"ops":[]}', 'must be { id, index: 0, ops }'],
    ['ops not a list', '{"id":"c","index":0,"ops":{}}', 'ops: must be a list'],
    ['op not a pair', '{"id":"c","index":0,"ops":[["k"]]}', 'ops[0]: must be [key, value or null]'],
    ['value a number', '{"id":"c","index":0,"ops":[["k",1]]}', 'ops[0]'],
  ])('refuses a part: %s', (_, raw, reason) => {
    const read = readChangePart(changePartKey(0), raw);
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.reason).toContain(reason);
  });

  it('refuses a commit without its id, parts and ops', () => {
    expect(readChangeCommit('{"id":"c","parts":-1,"ops":0}').ok).toBe(false);
    expect(readChangeCommit('[]').ok).toBe(false);
  });
});

describe('BucketView', () => {
  const before: Write[] = [
    ['quota.a', 'a1'],
    ['quota.b', 'b1'],
  ];
  const ops: ChangeOp[] = [
    ['quota.a', 'a2'],
    ['quota.b', null],
    ['quota.c', 'c2'],
    ['quota.d', 'd2'],
  ];
  const all = change('c1', ops);
  const commitAt = all.length - 1;

  it.each<[string, Write[], Record<string, string>]>([
    ['no part yet', [...before], { 'quota.a': 'a1', 'quota.b': 'b1' }],
    [
      'every part, no commit',
      [...before, ...all.slice(0, commitAt)],
      { 'quota.a': 'a1', 'quota.b': 'b1' },
    ],
    ['some parts', [...before, ...all.slice(0, 1)], { 'quota.a': 'a1', 'quota.b': 'b1' }],
    [
      'parts and commit',
      [...before, ...all],
      { 'quota.a': 'a2', 'quota.c': 'c2', 'quota.d': 'd2' },
    ],
    [
      'a single write after the commit wins',
      [...before, ...all, ['quota.c', 'c3']],
      { 'quota.a': 'a2', 'quota.c': 'c3', 'quota.d': 'd2' },
    ],
    [
      'settled: entries under their keys, commit and parts deleted',
      [
        ...before,
        ...all,
        ['quota.a', 'a2'],
        ['quota.b', null],
        ['quota.c', 'c2'],
        ['quota.d', 'd2'],
        [CHANGE_COMMIT_KEY, null],
        ...all.slice(0, commitAt).map(([key]): Write => [key, null]),
      ],
      { 'quota.a': 'a2', 'quota.c': 'c2', 'quota.d': 'd2' },
    ],
  ])('serves all of a change or none of it: %s', (_, writes, expected) => {
    const view = new BucketView(reader);
    expect(feed(view, writes)).toEqual([]);
    expect(served(view)).toEqual(expected);
  });

  it('applies nothing of a commit whose parts are missing or of another change', () => {
    const other = change('c0', [
      ['quota.x', 'x'],
      ['quota.y', 'y'],
    ]);
    for (const writes of [
      // the first part was overwritten by another change's part (a dead admin's leftovers)
      [...before, ...all.slice(0, commitAt), other[0]!, all[commitAt]!],
      // a part deleted before the commit arrived
      [...before, ...all.slice(0, commitAt), [changePartKey(1), null] as Write, all[commitAt]!],
    ]) {
      const view = new BucketView(reader);
      const problems = feed(view, writes);
      expect(problems.join()).toContain('is missing: the change is not applied');
      expect(served(view)).toEqual({ 'quota.a': 'a1', 'quota.b': 'b1' });
      expect(view.committedKeys).toBeUndefined();
    }
  });

  it('skips a refused write of a change and keeps the previous value of that key', () => {
    const view = new BucketView(reader);
    const writes = change('c1', [
      ['quota.a', 'bad'],
      ['quota.c', 'c2'],
    ]);
    const problems = feed(view, [...before, ...writes]);
    expect(problems).toEqual(['quota.a: bad']);
    expect(served(view)).toEqual({ 'quota.a': 'a1', 'quota.b': 'b1', 'quota.c': 'c2' });
  });

  it('reports a change only when the entries in force change', () => {
    const view = new BucketView(reader);
    feed(view, before);
    expect(view.takeChanged()).toBe(true);
    feed(view, all.slice(0, commitAt));
    expect(view.takeChanged()).toBe(false);
    feed(view, all.slice(commitAt));
    expect(view.takeChanged()).toBe(true);
    // the settle writes what is served already
    feed(view, [
      ['quota.a', 'a2'],
      ['quota.c', 'c2'],
      [CHANGE_COMMIT_KEY, null],
    ]);
    expect(view.takeChanged()).toBe(false);
  });

  it('names the committed keys and the traces a reconcile must clear', () => {
    const view = new BucketView(reader);
    feed(view, [...before, ...all]);
    expect(view.committedKeys).toEqual(ops.map(([key]) => key));
    expect(view.changeTraces).toEqual({
      commit: true,
      parts: all.slice(0, commitAt).map((_, i) => i),
    });
    feed(view, [[CHANGE_COMMIT_KEY, null]]);
    expect(view.committedKeys).toBeUndefined();
    expect(view.changeTraces.commit).toBe(false);
  });

  it('a replay drops the live keys it did not deliver; keys written by a commit count', () => {
    const view = new BucketView(reader);
    feed(view, [...before, ['quota.z', 'z']]);
    view.beginReplay();
    feed(view, [
      ['quota.b', 'b1'],
      ...change('c1', [
        ['quota.a', 'a2'],
        ['quota.q', 'q'],
      ]),
    ]);
    expect(view.endReplay()).toEqual(['quota.z']);
    expect(served(view)).toEqual({ 'quota.a': 'a2', 'quota.b': 'b1', 'quota.q': 'q' });
  });

  it('never lets a change write its own protocol keys', () => {
    const view = new BucketView(reader);
    const problems = feed(
      view,
      change('c1', [
        ['quota.a', 'a'],
        [CHANGE_COMMIT_KEY, 'x'],
      ]),
    );
    expect(problems.join()).toContain('cannot write');
    expect(served(view)).toEqual({ 'quota.a': 'a' });
  });
});
