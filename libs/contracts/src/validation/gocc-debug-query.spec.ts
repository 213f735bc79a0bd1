import { encodeDebugListCursor, parseGoccDebugListQuery } from './gocc-debug-query';

describe('GoCC /debug listing query', () => {
  it('defaults to a page of 100 from the start', () => {
    expect(parseGoccDebugListQuery({})).toEqual({ ok: true, value: { limit: 100 } });
  });

  it('reads back the cursor a page handed out', () => {
    const cursor = { shard: 3, table: 1, row: 4096 };
    expect(
      parseGoccDebugListQuery({ limit: '1000', cursor: encodeDebugListCursor(cursor) }),
    ).toEqual({ ok: true, value: { limit: 1000, cursor } });
  });

  it.each<[Record<string, string | string[]>, string]>([
    [{ limit: '0' }, 'limit'],
    [{ limit: '1001' }, 'limit'],
    [{ limit: '-1' }, 'limit'],
    [{ limit: '' }, 'limit'],
    [{ limit: ['1', '2'] }, 'limit'],
    [{ cursor: 'next' }, 'cursor'],
    [{ cursor: '1-2' }, 'cursor'],
    [{ cursor: '' }, 'cursor'],
    [{ cursor: ['1-2-3', '1-2-3'] }, 'cursor'],
  ])('refuses %j at %s', (query, field) => {
    const result = parseGoccDebugListQuery(query);
    expect(result).toMatchObject({ ok: false, field });
    expect(!result.ok && result.reason.startsWith(`${field}: `)).toBe(true);
  });
});
