// Node initialisation, metadata refresh and lifecycle: the pure part (no I/O).
export * from './match.js';
export * from './metadata.js';
export * from './plan.js';
export * from './provider-id.js';
export * from './types.js';
export * from './well-known.js';
