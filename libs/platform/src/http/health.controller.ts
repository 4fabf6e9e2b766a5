import { Controller, Get, Optional } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorFunction, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '../caller';
import { SqlExecutor } from '../database/sql-executor';
import { Reads } from '../replicas/route-access.decorator';
import { ReadRouter } from '../replicas/read-router';

/** Liveness (the process answers) and readiness (the database answers; replicas reported); no credentials needed. */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly sql: SqlExecutor,
    @Optional() private readonly router?: ReadRouter,
  ) {}

  @Reads()
  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Reads()
  @Get('ready')
  @HealthCheck()
  ready() {
    // The primary answers a statement within 2 s (as TypeORM's pingCheck asked before), through the executor.
    const ping = async () => void (await this.sql.primaryRows('SELECT 1'));
    const checks: HealthIndicatorFunction[] = [() => this.indicator.check('database').attempt(ping).withTimeout(2000)];
    // Replicas are reported, never failed on: their reads go to the primary meanwhile (docs/api.md §11).
    const router = this.router;
    if (router?.replicas.length) checks.push(() => ({ replicas: { status: 'up', replicas: router.status() } }));
    return this.health.check(checks);
  }
}
