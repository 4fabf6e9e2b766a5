export * from './caller-context';
export * from './caller.guard';
export * from './token-verifier';
export * from './expensive-reads';
