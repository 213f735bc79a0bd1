import { ADMIN_ROUTES } from '@app/contracts';
import { Controller, Get, Header } from '@nestjs/common';
import { HealthService } from './health.service';

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  // Without its leading slash, as Nest's route paths are written (and read back from metadata).
  @Get(ADMIN_ROUTES.health.slice(1))
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return this.health.liveness();
  }
}
