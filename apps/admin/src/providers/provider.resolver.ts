import { UseGuards } from '@nestjs/common';
import { Args, Mutation, Query, Resolver } from '@nestjs/graphql';
import { Actor } from '../graphql/actor.decorator';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { SafeInt } from '../graphql/safe-int.scalar';
import { ProviderService } from './provider.service';
import { Provider } from './provider.types';

@Resolver(() => Provider)
@UseGuards(AdminAuthGuard)
export class ProviderResolver {
  constructor(private readonly service: ProviderService) {}

  @Query(() => [Provider])
  providers(): Promise<Provider[]> {
    return this.service.list();
  }

  @Query(() => Provider, { nullable: true })
  provider(@Args('name', { type: () => String }) name: string): Promise<Provider | undefined> {
    return this.service.get(name);
  }

  @Mutation(() => Provider, {
    description: "Serves (or stops serving) the provider's model quotas.",
  })
  setProviderEnabled(
    @Args('name', { type: () => String }) name: string,
    @Args('enabled', { type: () => Boolean }) enabled: boolean,
    @Actor() actor: string,
  ): Promise<Provider> {
    return this.service.setEnabled(name, enabled, actor);
  }

  @Mutation(() => Provider, { description: "Sets one model's limits; creates the model if new." })
  setModelQuota(
    @Args('provider', { type: () => String }) provider: string,
    @Args('model', { type: () => String }) model: string,
    @Args('maxRpm', { type: () => SafeInt }) maxRpm: number,
    @Args('maxTpm', { type: () => SafeInt }) maxTpm: number,
    @Args('maxRpd', { type: () => SafeInt }) maxRpd: number,
    @Actor() actor: string,
  ): Promise<Provider> {
    return this.service.setModelQuota(provider, { model, maxRpm, maxTpm, maxRpd }, actor);
  }
}
