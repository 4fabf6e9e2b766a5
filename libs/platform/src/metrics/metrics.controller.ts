import { Controller, Get, NotFoundException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../caller';
import { Reads } from '../replicas/route-access.decorator';
import { AppMetrics } from './app-metrics';
import { RenderedBody } from '../http/response-body';

/**
 * GET /metrics in the Prometheus text format, for a scraper that reaches the app directly: the
 * gateways (npm start's and nginx) answer 404 for it, so it stays internal. No credentials, like
 * /health; 404 when METRICS_ENABLED=false.
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: AppMetrics) {}

  @Reads()
  @Get()
  async scrape(): Promise<RenderedBody> {
    if (!this.metrics.enabled) throw new NotFoundException();
    return new RenderedBody(await this.metrics.registry.metrics(), this.metrics.registry.contentType);
  }
}
