export * from './app-metrics';
export * from './metrics.controller';
export * from './metrics.module';
export * from './keyed-histogram';
