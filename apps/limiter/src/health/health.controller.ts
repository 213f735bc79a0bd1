import { OPERATIONS_ROUTES } from '@app/contracts';
import { Controller, Get, Header, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HealthService, type ReadinessReport } from './health.service';

const path = (route: string): string => route.slice(1);

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get(path(OPERATIONS_ROUTES.health))
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return this.health.liveness();
  }

  /** 200 when ready, 503 until then; the body says what is missing either way. */
  @Get(path(OPERATIONS_ROUTES.ready))
  readyz(@Res({ passthrough: true }) reply: FastifyReply): ReadinessReport {
    const report = this.health.readiness();
    reply.code(report.ready ? 200 : 503);
    return report;
  }
}
