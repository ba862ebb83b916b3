// partkit's public types. Each domain adds one line.
export * from './errors';
export * from './bucketing';
export * from './objects';
export * from './imports';
export * from './lifecycle';
export * from './sync';
export * from './kafka';
