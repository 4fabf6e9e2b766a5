export * from './internal-api.contract';
