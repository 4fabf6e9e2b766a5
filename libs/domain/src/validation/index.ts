export * from './validation.pipe';
export * from './json-shape';
