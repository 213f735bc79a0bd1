import {
  DEFAULT_NATS_QUEUE_GROUP,
  DEFAULT_NATS_SUBJECT_PREFIX,
  isValidSubjectPrefix,
  natsSubjects,
} from './subjects';

describe('NATS subjects', () => {
  it('uses the contract defaults', () => {
    expect(DEFAULT_NATS_SUBJECT_PREFIX).toBe('ratelimit.v1');
    expect(DEFAULT_NATS_QUEUE_GROUP).toBe('ratelimit-limiter');
    expect(natsSubjects()).toEqual({
      acquire: 'ratelimit.v1.acquire',
      acquireBatch: 'ratelimit.v1.acquire.batch',
      decide: 'ratelimit.v1.decide',
      release: 'ratelimit.v1.release',
      usage: 'ratelimit.v1.usage',
      stats: 'ratelimit.v1.stats',
    });
  });

  it('builds every subject from a custom prefix', () => {
    const subjects = natsSubjects('acme.limits.v1');
    const all: string[] = Object.values<string>({ ...subjects });
    expect(all).toHaveLength(6);
    expect(all.every((subject) => subject.startsWith('acme.limits.v1.'))).toBe(true);
    expect(subjects.acquireBatch).toBe('acme.limits.v1.acquire.batch');
  });

  it.each(['', 'a..b', '.a', 'a.', 'a.*', 'a.>', 'has space'])(
    'refuses the prefix %j',
    (prefix) => {
      expect(isValidSubjectPrefix(prefix)).toBe(false);
      expect(() => natsSubjects(prefix)).toThrow(/NATS_SUBJECT_PREFIX/);
    },
  );
});
