import { describeChange, diffJson, parseJson } from './diff';

const lines = (before: unknown, after: unknown): string[] =>
  diffJson(
    before === null ? null : JSON.stringify(before),
    after === null ? null : JSON.stringify(after),
  ).map(describeChange);

describe('diffJson', () => {
  it('names a changed leaf deep in objects and arrays by its path', () => {
    const before = { name: 'q', limits: [{ name: 'rpm', limit: 100 }], queue: { maxSize: 5 } };
    const after = { name: 'q', limits: [{ name: 'rpm', limit: 200 }], queue: { maxSize: 6 } };
    expect(lines(before, after)).toEqual(['limits[0].limit: 100 -> 200', 'queue.maxSize: 5 -> 6']);
  });

  it('finds nothing when the documents are equal, whatever their key order', () => {
    expect(lines({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual([]);
  });

  it('lists keys added and removed, with every leaf of a nested value', () => {
    expect(lines({ a: 1, gone: { x: 1, y: 'z' } }, { a: 1, queue: { maxSize: 10 } })).toEqual([
      'gone.x: removed 1',
      'gone.y: removed "z"',
      'queue.maxSize: added 10',
    ]);
  });

  it('compares arrays by position: a longer array adds, a shorter one removes', () => {
    expect(lines({ l: [1, 2] }, { l: [1, 3, { n: 4 }] })).toEqual([
      'l[1]: 2 -> 3',
      'l[2].n: added 4',
    ]);
    expect(lines({ l: ['a', 'b'] }, { l: ['a'] })).toEqual(['l[1]: removed "b"']);
  });

  it('treats a null before as a creation: every non-null leaf added', () => {
    expect(lines(null, { name: 'q', match: null, limits: [{ limit: 5 }] })).toEqual([
      'name: added "q"',
      'limits[0].limit: added 5',
    ]);
  });

  it('treats a null after as a deletion: every non-null leaf removed', () => {
    expect(lines({ name: 'q', shadow: false, tags: [] }, null)).toEqual([
      'name: removed "q"',
      'shadow: removed false',
      'tags: removed []',
    ]);
  });

  it('shows a value that turns from null into something as a change', () => {
    expect(lines({ queue: null }, { queue: null, burst: 1 })).toEqual(['burst: added 1']);
    expect(lines({ burst: null }, { burst: 3 })).toEqual(['burst: null -> 3']);
  });

  it('reports a leaf that became an object as what went and what came', () => {
    expect(lines({ queue: 0 }, { queue: { maxSize: 1 } })).toEqual([
      'queue: removed 0',
      'queue.maxSize: added 1',
    ]);
  });

  it('quotes keys that are not plain names', () => {
    expect(lines({ 'gpt-4o': 1 }, { 'gpt-4o': 2 })).toEqual(['["gpt-4o"]: 1 -> 2']);
  });

  it('diffs documents that are leaves themselves, and keeps text that is not JSON', () => {
    expect(diffJson('1', '2').map(describeChange)).toEqual(['(document): 1 -> 2']);
    expect(diffJson('not json', null).map(describeChange)).toEqual([
      '(document): removed "not json"',
    ]);
    expect(diffJson(null, null)).toEqual([]);
    expect(parseJson(undefined)).toBeUndefined();
  });
});
