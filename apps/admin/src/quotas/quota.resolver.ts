import { UseGuards } from '@nestjs/common';
import { Args, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { Actor } from '../graphql/actor.decorator';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { asyncIterator } from '../graphql/async-iterator';
import { QuotaEvents } from './quota-events';
import { QuotaInput } from './quota.inputs';
import { QuotaService } from './quota.service';
import { Quota, QuotaChange } from './quota.types';

@Resolver(() => Quota)
@UseGuards(AdminAuthGuard)
export class QuotaResolver {
  constructor(
    private readonly service: QuotaService,
    private readonly events: QuotaEvents,
  ) {}

  @Query(() => [Quota], { description: 'The quotas the admin manages, by name.' })
  quotas(): Promise<Quota[]> {
    return this.service.list();
  }

  @Query(() => Quota, { nullable: true })
  quota(@Args('name', { type: () => String }) name: string): Promise<Quota | undefined> {
    return this.service.get(name);
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
