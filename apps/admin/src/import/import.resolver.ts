import { UseGuards } from '@nestjs/common';
import { Args, Mutation, Resolver } from '@nestjs/graphql';
import { Actor } from '../graphql/actor.decorator';
import { AdminAuthGuard } from '../graphql/auth.guard';
import { ImportService } from './import.service';
import { ImportFormat, ImportResult } from './import.types';

@Resolver()
@UseGuards(AdminAuthGuard)
export class ImportResolver {
  constructor(private readonly imports: ImportService) {}

  @Mutation(() => ImportResult, {
    description: "Imports a config document's quotas (and go-ratelimit usage state).",
  })
  importConfig(
    @Args('document', { type: () => String }) document: string,
    @Args('format', { type: () => ImportFormat }) format: ImportFormat,
    @Actor() actor: string,
  ): Promise<ImportResult> {
    return this.imports.import(document, format, actor);
  }
}
