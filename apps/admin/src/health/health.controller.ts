import { ADMIN_ROUTES } from '@app/contracts';
import { Controller, Get, Header, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HealthService, type AdminReadiness } from './health.service';

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  // Without its leading slash, as Nest's route paths are written (and read back from metadata).
  @Get(ADMIN_ROUTES.health.slice(1))
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return this.health.liveness();
  }

  /** 200 when ready, 503 until then; the body says what is missing either way. */
  @Get(ADMIN_ROUTES.ready.slice(1))
  readyz(@Res({ passthrough: true }) reply: FastifyReply): AdminReadiness {
    const report = this.health.readiness();
    reply.code(report.ready ? 200 : 503);
    return report;
  }
}
