import { Controller, Get, UseGuards } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import { ReportsService } from './reports.service';

/** Limited by @nestjs/throttler, whose counts live in the ratelimit service. */
@Controller('reports')
@UseGuards(ThrottlerGuard)
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  @Get()
  list(): { reports: string[] } {
    return this.reports.list();
  }
}
