import { Global, Module } from '@nestjs/common';
import { AppMetrics } from './app-metrics';
import { MetricsController } from './metrics.controller';

/** Prometheus metrics of one app: AppMetrics for the features to count with, and GET /metrics. */
@Global()
@Module({
  providers: [AppMetrics],
  controllers: [MetricsController],
  exports: [AppMetrics],
})
export class MetricsModule {}
