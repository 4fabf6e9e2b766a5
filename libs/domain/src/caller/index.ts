export * from './caller-context';
export * from './caller.guard';
