import { Module } from '@nestjs/common';
import { ControlModule } from '../control';
import { StoreModule } from '../store';
import { ListSizesService } from './list-sizes.service';

/** What the GraphQL module's options and the operation limits need from the rest of the admin. */
@Module({
  imports: [StoreModule, ControlModule],
  providers: [ListSizesService],
  exports: [ListSizesService],
})
export class QueryLimitsModule {}
