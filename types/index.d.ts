// partkit's public types. Each domain adds one line. Node-only subpaths have their own
// declarations (partkit/kafka: types/kafka.d.ts).
export * from './errors';
export * from './bucketing';
export * from './objects';
export * from './imports';
export * from './lifecycle';
export * from './sync';
