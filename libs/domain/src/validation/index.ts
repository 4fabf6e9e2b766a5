export * from './json-shape';
export * from './text-length';
