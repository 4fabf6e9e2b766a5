export * from './validation.pipe';
export * from './json-shape';
export * from './text-length';
