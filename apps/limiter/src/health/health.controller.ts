import { Controller, Get, Header } from '@nestjs/common';
import { HealthService } from './health.service';

@Controller()
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('healthz')
  @Header('Content-Type', 'text/plain; charset=utf-8')
  healthz(): string {
    return this.health.liveness();
  }
}
