import { parseBatch, parseBatchEntry } from './parse-batch';

describe('parseBatch', () => {
  it('answers each entry in its place; one bad entry does not fail the batch', () => {
    const result = parseBatch({
      requests: [
        { key: 'a' },
        { key: 'b', wait: true },
        { key: 'c', cost: -1 },
        'd',
        { key: 'e', cost: 2 },
      ],
    });
    expect(result).toEqual({
      ok: true,
      value: [
        { ok: true, value: { key: 'a', cost: { requests: 1 } } },
        {
          ok: false,
          field: 'requests[1].wait',
          reason: 'requests[1].wait: must be false or absent: batch entries cannot wait',
        },
        {
          ok: false,
          field: 'requests[2].cost',
          reason: 'requests[2].cost: must be an integer >= 0',
        },
        { ok: false, field: 'requests[3]', reason: 'requests[3]: must be a JSON object' },
        { ok: true, value: { key: 'e', cost: { requests: 2 } } },
      ],
    });
  });

  it('accepts wait: false and an empty batch', () => {
    expect(parseBatchEntry({ key: 'a', wait: false }, 0)).toMatchObject({ ok: true });
    expect(parseBatch({ requests: [] })).toEqual({ ok: true, value: [] });
  });

  it('accepts exactly 1000 entries and refuses 1001', () => {
    const entries = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ key: `k${index}` }));
    const full = parseBatch({ requests: entries(1000) });
    expect(full.ok && full.value.length).toBe(1000);
    expect(parseBatch({ requests: entries(1001) })).toEqual({
      ok: false,
      field: 'requests',
      reason: 'requests: must be an array of at most 1000 acquire requests',
    });
  });

  it.each<[unknown, string]>([
    [{}, 'requests'],
    [{ requests: { key: 'a' } }, 'requests'],
    [null, 'body'],
    [[{ key: 'a' }], 'body'],
  ])('fails the whole batch for %j at %s', (input, field) => {
    expect(parseBatch(input)).toMatchObject({ ok: false, field });
  });
});
