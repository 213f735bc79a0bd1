import { Injectable } from '@nestjs/common';
import { StatsAggregator } from '../control';
import { AdminStore } from '../store';
import type { ListSizes } from './query-cost';

/** The sizes the cost of a query is computed with, read from memory (no I/O) per operation. */
@Injectable()
export class ListSizesService {
  constructor(
    private readonly store: AdminStore,
    private readonly stats: StatsAggregator,
  ) {}

  current(): ListSizes {
    return { ...this.store.listSizes(), statsQuotas: this.stats.largestReport() };
  }
}
