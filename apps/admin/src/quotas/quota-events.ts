import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import type { QuotaChange } from './quota.types';

/** quotaChanged's source: every change this admin makes, in the order it committed them. */
@Injectable()
export class QuotaEvents implements OnModuleDestroy {
  private readonly changes = new Subject<QuotaChange>();

  emit(change: QuotaChange): void {
    this.changes.next(change);
  }

  stream(): Observable<QuotaChange> {
    return this.changes.asObservable();
  }

  onModuleDestroy(): void {
    this.changes.complete();
  }
}
