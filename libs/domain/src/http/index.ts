export * from './configure-app';
export * from './logging.module';
export * from './health.controller';
export * from './send-json';
export * from './service-call';
export * from './request-id';
export * from './express-adapter';
export * from './gateway-handoff';
