import { UseGuards } from '@nestjs/common';
import { Args, Int, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { Actor } from '../graphql/actor.decorator';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { asyncIterator } from '../graphql/async-iterator';
import { QuotaEvents } from './quota-events';
import { QuotaInput } from './quota.inputs';
import { QuotaService } from './quota.service';
import { Quota, QuotaChange } from './quota.types';
import { QuotasInForceService } from './quotas-in-force.service';
import { QuotaInForce } from './quotas-in-force.types';

@Resolver(() => Quota)
@UseGuards(AdminAuthGuard)
export class QuotaResolver {
  constructor(
    private readonly service: QuotaService,
    private readonly events: QuotaEvents,
    private readonly inForce: QuotasInForceService,
  ) {}

  @Query(() => [Quota], {
    description:
      'The quotas the admin manages, by name: all of them, or a page: the first `first` ' +
      '(1..1000) named after `after` (the last name of the previous page). A list of many ' +
      'quotas costs more than one query may: page it.',
  })
  quotas(
    @Args('first', { type: () => Int, nullable: true }) first?: number | null,
    @Args('after', { type: () => String, nullable: true }) after?: string | null,
  ): Promise<Quota[]> {
    return this.service.list({ first: first ?? undefined, after: after ?? undefined });
  }

  @Query(() => Quota, { nullable: true })
  quota(@Args('name', { type: () => String }) name: string): Promise<Quota | undefined> {
    return this.service.get(name);
  }

  @Query(() => [QuotaInForce], {
    description:
      'Every quota the limiters serve, by name, with where it comes from: the admin quotas, the ' +
      'model quotas of enabled providers, the built-in default, and the quotas live limiters ' +
      'report from their config files (names only: the admin cannot read those files).',
  })
  quotasInForce(): Promise<QuotaInForce[]> {
    return this.inForce.list();
  }

  @Mutation(() => Quota, { description: 'Creates or replaces a quota; in force within 1 s.' })
  upsertQuota(
    @Args('input', { type: () => QuotaInput }) input: QuotaInput,
    @Actor() actor: string,
  ): Promise<Quota> {
    return this.service.upsert(input, actor);
  }

  @Mutation(() => Boolean, { description: 'Removes an admin quota (NOT_FOUND if absent).' })
  deleteQuota(
    @Args('name', { type: () => String }) name: string,
    @Actor() actor: string,
  ): Promise<boolean> {
    return this.service.delete(name, actor);
  }

  @Subscription(() => QuotaChange, { resolve: (change: QuotaChange) => change })
  quotaChanged(): AsyncIterableIterator<QuotaChange> {
    return asyncIterator(this.events.stream());
  }
}
