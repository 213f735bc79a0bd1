import { getIntrospectionQuery, parse } from 'graphql';
import { MAX_ROOT_FIELDS, MAX_SELECTIONS, shapeProblem } from './query-shape';

const aliases = (n: number, field: string, prefix = 'a') =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}: ${field}`).join(' ');

describe('shapeProblem', () => {
  it.each([
    ['a console page', '{ quotas { name limits { name } } providers { name } stats { at } }'],
    ['GraphiQL’s introspection', getIntrospectionQuery({ descriptions: true })],
    [`${MAX_ROOT_FIELDS} aliases`, `{ ${aliases(MAX_ROOT_FIELDS, 'quotas { name }')} }`],
    ['one field asked twice is one root field', `{ ${'quotas { name } '.repeat(40)} }`],
    ['8 fields deep', '{ quotas { limits { a { b { c { d { e { f } } } } } } } }'],
    [
      'a type reference 9 levels deep',
      '{ __type(name: "Quota") { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } }',
    ],
    [
      'a fragment cycle (validation refuses it)',
      '{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }',
    ],
  ])('lets %s through', (_, text) => {
    expect(shapeProblem(parse(text))).toBeUndefined();
  });

  it.each([
    [
      'root aliases',
      `{ ${aliases(MAX_ROOT_FIELDS + 1, 'quotas { name }')} }`,
      /21 root fields \(aliases included\); at most 20/,
    ],
    [
      'root aliases behind fragments',
      `{ ...A ... on Query { ${aliases(11, 'stats { at }')} } } fragment A on Query { ${aliases(10, 'quota(name: "x") { name }', 'b')} }`,
      /21 root fields/,
    ],
    [
      'aliased mutations',
      `mutation { ${aliases(25, 'deleteQuota(name: "x")')} }`,
      /25 root fields/,
    ],
    [
      'more selections than allowed',
      `{ quotas { ${'name '.repeat(MAX_SELECTIONS)} } }`,
      new RegExp(`${MAX_SELECTIONS + 1} selections`),
    ],
    [
      '9 fields deep',
      '{ quotas { limits { a { b { c { d { e { f { g } } } } } } } } }',
      /9 fields deep/,
    ],
    [
      'depth through fragments',
      '{ ...A } fragment A on Query { quotas { ...B } } fragment B on Quota { limits { a { b { c { d { e { f { g } } } } } } } }',
      /9 fields deep/,
    ],
    [
      'four nested lists of the schema',
      '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
      /nests 4 lists of the schema/,
    ],
    [
      'nested lists of the schema through fragments',
      '{ __schema { types { ...T } } } fragment T on __Type { fields { type { ...U } } } fragment U on __Type { inputFields { type { enumValues { name } } } }',
      /nests 4 lists/,
    ],
  ])('refuses %s', (_, text, message) => {
    expect(shapeProblem(parse(text))).toMatch(message);
  });

  it('measures each fragment once, and refuses fragments that spread out past the limit', () => {
    // n fragments, each spreading the next twice: 2^n paths if each spread were walked.
    const chain = (n: number) =>
      Array.from(
        { length: n },
        (_, i) =>
          `fragment F${i} on Quota { name ${i < n - 1 ? `...F${i + 1} ...F${i + 1}` : ''} }`,
      ).join(' ');
    expect(shapeProblem(parse(`{ quotas { ...F0 } } ${chain(8)}`))).toBeUndefined();
    expect(shapeProblem(parse(`{ quotas { ...F0 } } ${chain(40)}`))).toMatch(
      /\d+ selections with its fragments spread out; at most 5000/,
    );
  });
});
