import { goccDefaultQuota, GOCC_DEFAULTS, type QuotaSpec } from '@app/contracts';
import { LocalScopeWarning, QueueGroupPeers, replicatedLocalQuotas } from './local-scope-warning';

const T0 = 1_800_000_000_000;
describe('QueueGroupPeers: the replicas of this queue group, from their stats reports', () => {
  it('counts the replicas of its own group heard in the last 3 s', () => {
    const peers = new QueueGroupPeers('me', 'g');
    expect([peers.replicas(T0), peers.peers(T0)]).toEqual([0, 0]);
    peers.hear('me', 'g', T0);
    expect([peers.replicas(T0), peers.peers(T0)]).toEqual([1, 0]);
    peers.hear('other-group', 'h', T0);
    peers.hear('old-limiter', undefined, T0); // no header: cannot be told to share ours
    peers.hear(undefined, 'g', T0);
    expect([peers.replicas(T0), peers.peers(T0)]).toEqual([1, 0]);
    peers.hear('b', 'g', T0 + 100);
    peers.hear('b', 'g', T0 + 600);
    expect([peers.replicas(T0 + 600), peers.peers(T0 + 600)]).toEqual([2, 1]);
    // b silent for 3 s has left; so has this one if its own reports stop
    expect(peers.peers(T0 + 3_599)).toBe(1);
    expect(peers.peers(T0 + 3_600)).toBe(0);
    expect(peers.replicas(T0 + 3_600)).toBe(0);
  });
});

const limited = (name: string, extra: Partial<QuotaSpec> = {}): QuotaSpec => ({
  name,
  limits: [{ name: 'rps', unit: 'requests', limit: 5, windowMs: 1000, algorithm: 'fixed_window' }],
  ...extra,
});

describe('replicatedLocalQuotas: which quotas replicas multiply', () => {
  const goccDefault = goccDefaultQuota(GOCC_DEFAULTS);
  const quotas: QuotaSpec[] = [
    goccDefault, // GoCC's default, per replica by intent
    limited('api'),
    limited('clustered', { scope: 'cluster' }), // decided in Redis
    limited('cluster-without-redis', { scope: 'cluster' }),
    limited('gocc:alpha'), // from a GoCC file or import
    limited('gocc:merged:fnv-0123abcd'), // a merge of a GoCC file's regex entries
    limited('unlimited', {
      limits: [
        { name: 'rps', unit: 'requests', limit: 0, windowMs: 1000, algorithm: 'fixed_window' },
      ],
    }),
    limited('leases', { limits: [], concurrency: { max: 2, leaseTtlMs: 1000 } }),
    limited('shadowed', { shadow: true }),
  ];
  const scopeOf = (name: string) => (name === 'clustered' ? 'cluster' : 'local');

  it('names every local quota that limits something, except GoCC’s', () => {
    expect(replicatedLocalQuotas(quotas, scopeOf, goccDefault)).toEqual([
      'api',
      'cluster-without-redis',
      'leases',
      'shadowed',
    ]);
  });

  it('names the default quota once it is not GoCC’s own (defaults:, the admin)', () => {
    const changed = { ...goccDefault, queue: { maxSize: 1, maxWaitMs: 1000 } };
    expect(replicatedLocalQuotas([changed], scopeOf, goccDefault)).toEqual(['default']);
  });
});

describe('LocalScopeWarning: once per list of local quotas, only with peers', () => {
  it('says nothing alone, then once when a peer comes, again only for another list', () => {
    const warning = new LocalScopeWarning();
    warning.setQuotas(['api', 'reports']);
    expect(warning.check(0, 'g')).toBeUndefined();
    const first = warning.check(1, 'g');
    expect(first).toContain('1 other replica shares NATS queue group "g" with this one');
    expect(first).toContain('the quotas api, reports are local');
    expect(first).toContain('up to 2x the limit in all');
    expect(warning.check(1, 'g')).toBeUndefined(); // the next report, 500 ms later
    expect(warning.check(2, 'g')).toBeUndefined(); // a third replica: same quotas, said already
    warning.setQuotas(['api', 'reports']); // a change elsewhere in the set
    expect(warning.check(2, 'g')).toBeUndefined();
    warning.setQuotas(['api', 'reports', 'uploads']);
    expect(warning.check(2, 'g')).toContain('2 other replicas share');
  });

  it('says nothing when no quota is at risk, and shortens long lists', () => {
    const warning = new LocalScopeWarning();
    warning.setQuotas([]);
    expect(warning.check(3, 'g')).toBeUndefined();
    warning.setQuotas(Array.from({ length: 12 }, (_, i) => `q${i}`));
    expect(warning.check(3, 'g')).toContain('q9 and 2 more are local');
  });
});
