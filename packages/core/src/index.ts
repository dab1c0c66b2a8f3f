export * from './constants';
export * from './errors';
export * from './permissions';
export * from './schemas';
export * from './validation';
export * from './api-client';
export * from './list-query';
