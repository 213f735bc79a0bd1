import { Injectable } from '@nestjs/common';

@Injectable()
export class ReportsService {
  list(): { reports: string[] } {
    return { reports: ['daily', 'weekly'] };
  }
}
