import { keysHref, keysQueryOf, pageOf } from './routes';

describe('the Keys page address', () => {
  it.each([
    ['alice', 'api'],
    ['a key/with ?&=# and spaces', 'q&a'],
    ['clé-ü', undefined],
  ])('names %j in %j and reads back the same', (key, quota) => {
    const href = keysHref(key, quota);
    expect(pageOf(href)).toBe('keys');
    expect(keysQueryOf(href)).toEqual(quota === undefined ? { key } : { key, quota });
  });

  it.each(['#/keys', '#/keys?quota=api', '#/keys?key=', '#/live?key=a', ''])(
    'names no key in %j',
    (hash) => expect(keysQueryOf(hash)).toBeUndefined(),
  );
});
