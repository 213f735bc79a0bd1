import { UseGuards } from '@nestjs/common';
import { Args, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { Actor } from '../graphql/actor.decorator';
import { asyncIterator } from '../graphql/async-iterator';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { StatsService } from './stats.service';
import { KeyStats, ResetKeyResult, StatsUpdate } from './stats.types';

@Resolver()
@UseGuards(AdminAuthGuard)
export class StatsResolver {
  constructor(private readonly stats: StatsService) {}

  @Query(() => StatsUpdate, { name: 'stats', description: 'Counters summed over live limiters.' })
  currentStats(): StatsUpdate {
    return this.stats.current();
  }

  @Query(() => KeyStats, { description: 'Asks every limiter replica about one key.' })
  keyStats(
    @Args('key', { type: () => String }) key: string,
    @Args('quota', { type: () => String, nullable: true }) quota?: string,
  ): Promise<KeyStats> {
    return this.stats.keyStats(key, quota ?? undefined);
  }

  @Mutation(() => ResetKeyResult, { description: "Forgets a key's counts on every limiter." })
  resetKey(
    @Args('key', { type: () => String }) key: string,
    @Args('quota', { type: () => String, nullable: true }) quota: string | undefined,
    @Actor() actor: string,
  ): Promise<ResetKeyResult> {
    return this.stats.resetKey(key, quota ?? undefined, actor);
  }

  @Subscription(() => StatsUpdate, { resolve: (update: StatsUpdate) => update })
  statsUpdated(
    @Args('quota', { type: () => String, nullable: true }) quota?: string,
  ): AsyncIterableIterator<StatsUpdate> {
    return asyncIterator(this.stats.updates(quota ?? undefined));
  }
}
