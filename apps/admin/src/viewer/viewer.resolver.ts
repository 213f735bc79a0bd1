import { Inject, UseGuards } from '@nestjs/common';
import { Context, Query, Resolver } from '@nestjs/graphql';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { refusal, type RequestAuth } from '../graphql/request-auth';
import { ADMIN_SETTINGS, type AdminSettings } from '../settings/admin-settings';
import { Credential, Viewer } from './viewer.types';

/** A query like the others: with a read token set, it needs a token that may read. */
@Resolver(() => Viewer)
@UseGuards(AdminAuthGuard)
export class ViewerResolver {
  constructor(@Inject(ADMIN_SETTINGS) private readonly settings: AdminSettings) {}

  @Query(() => Viewer, { description: "The request's credential and whether it may write." })
  viewer(@Context('auth') auth: RequestAuth): Viewer {
    return {
      credential: Credential[auth.credential.kind],
      name: auth.credential.name ?? null,
      canWrite: refusal('mutation', auth, this.settings.tokens) === undefined,
    };
  }
}
