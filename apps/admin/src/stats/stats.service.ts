import { failureRule, parseStats, type NormalisedStats } from '@app/contracts';
import { Injectable } from '@nestjs/common';
import { map, type Observable } from 'rxjs';
import { LimiterClient, StatsAggregator, type StatsUpdate as ClusterStats } from '../control';
import { notFoundError, unavailableError, userInputError } from '../graphql/user-input-error';
import { Scope } from '../quotas/quota.types';
import { AdminStore } from '../store';
import type { KeyStats, ResetKeyResult, StatsUpdate } from './stats.types';

function toUpdate(s: ClusterStats, quota: string | undefined): StatsUpdate {
  const quotas = quota === undefined ? s.quotas : s.quotas.filter((q) => q.quota === quota);
  return {
    at: new Date(s.at),
    replicas: s.replicas,
    quotas: quotas.map((q) => ({
      ...q,
      scope: q.scope as Scope | undefined,
      topRefused: q.topRefused.map((r) => ({ ...r })),
    })),
  };
}

/** Refusals the limiters give for a key query, as GraphQL errors. */
function refused(code: string | undefined, reason: string | undefined): Error {
  const why = reason ?? code ?? 'no limiter answered';
  switch (code) {
    case 'UNKNOWN_QUOTA':
      return notFoundError(why);
    case 'INVALID_REQUEST':
      return userInputError([{ field: why.split(':')[0] ?? 'key', message: why }]);
    default:
      return unavailableError(why);
  }
}

/** Live counters from the limiters (they report every 500 ms) and per-key questions to them. */
@Injectable()
export class StatsService {
  constructor(
    private readonly aggregator: StatsAggregator,
    private readonly limiters: LimiterClient,
    private readonly store: AdminStore,
  ) {}

  current(): StatsUpdate {
    return toUpdate(this.aggregator.current(), undefined);
  }

  /** At least once a second while anyone listens; `quota` narrows the list to one quota. */
  updates(quota: string | undefined): Observable<StatsUpdate> {
    return this.aggregator.updates().pipe(map((s) => toUpdate(s, quota)));
  }

  async keyStats(key: string, quota: string | undefined): Promise<KeyStats> {
    const query = validKeyQuery(key, quota);
    const answer = await this.limiters.keyStats(query.key, query.quota);
    if (answer.stats === undefined) throw refused(answer.code, answer.reason);
    return {
      ...answer.stats,
      limits: answer.stats.limits.map((l) => ({ ...l })),
      scope: (answer.scope ?? 'local') as Scope,
      replicas: answer.replicas,
    };
  }

  async resetKey(key: string, quota: string | undefined, actor: string): Promise<ResetKeyResult> {
    const query = validKeyQuery(key, quota);
    const answer = await this.limiters.resetKey(query.key, query.quota);
    if (answer.replicas === 0 || answer.code !== undefined)
      throw refused(answer.code, answer.reason);
    const target = `${query.quota ?? '(resolved)'}/${query.key}`;
    await this.store.record(actor, 'resetKey', target, null, {
      reset: answer.reset,
      replicas: answer.replicas,
    });
    return { reset: answer.reset, replicas: answer.replicas };
  }
}

/** The same key rules as the limiters' stats operation (NFC, 1..256 bytes, no controls). */
function validKeyQuery(key: string, quota: string | undefined): NormalisedStats {
  const parsed = parseStats(quota === undefined ? { key } : { key, quota });
  if (!parsed.ok) throw userInputError([{ field: parsed.field, message: failureRule(parsed) }]);
  return parsed.value;
}
