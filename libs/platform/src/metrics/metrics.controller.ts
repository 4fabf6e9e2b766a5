import { Controller, Get, NotFoundException, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../caller';
import { Reads } from '../replicas/route-access.decorator';
import { AppMetrics } from './app-metrics';

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
  async scrape(@Res() res: Response): Promise<void> {
    if (!this.metrics.enabled) throw new NotFoundException();
    const text = await this.metrics.registry.metrics();
    res.status(200).setHeader('Content-Type', this.metrics.registry.contentType);
    res.end(text);
  }
}
