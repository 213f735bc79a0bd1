import { GraphQLError } from 'graphql';
import { validateQuotaInput } from './quota-validation';
import type { QuotaInput } from './quota.inputs';

function issuesOf(input: QuotaInput): unknown {
  try {
    validateQuotaInput(input);
  } catch (error) {
    if (error instanceof GraphQLError) return error.extensions['issues'];
    throw error;
  }
  throw new Error('the quota was accepted');
}

const limits = [{ name: 'rps', limit: 10, window: '1s' }];

describe('upsertQuota: match patterns run in linear time or are refused naming input.match', () => {
  it.each<[string, string]>([
    ['re:^api-(?!internal)', 'has lookaround "(?!"'],
    ['re:(?<=x)y', 'has lookaround "(?<="'],
    ['re:^(a)\\1$', 'has a backreference "\\1"'],
  ])('refuses %j', (match, problem) => {
    expect(issuesOf({ name: 'q', match, limits })).toEqual([
      { field: 'input.match', message: expect.stringContaining(problem) },
    ]);
  });

  it.each(['re:^(a+)+$', `*${'a*'.repeat(30)}b`, 're:(?i)^api-[[:digit:]]+$'])(
    'accepts %j, which the linear matchers decide on any key',
    (match) => {
      expect(validateQuotaInput({ name: 'q', match, limits })).toMatchObject({ match });
    },
  );
});

describe('upsertQuota: clientOverrides', () => {
  it('is absent unless the input sets it, and then kept as given', () => {
    expect(validateQuotaInput({ name: 'q', limits }).clientOverrides).toBeUndefined();
    expect(validateQuotaInput({ name: 'q', limits, clientOverrides: true })).toMatchObject({
      clientOverrides: true,
    });
    expect(validateQuotaInput({ name: 'q', limits, clientOverrides: false })).toMatchObject({
      clientOverrides: false,
    });
  });
});
