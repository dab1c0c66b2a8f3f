export * from './numbers';
export * from './dtmf';
export * from './registration';
export * from './calls';
export * from './headers';
export * from './directory';
