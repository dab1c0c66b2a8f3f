export * from './identifiers';
export * from './schedules';
export * from './decide';
export * from './sync';
