/** Moved to pipeline/handler.ts (the handler contract is the pipeline's, not HTTP's); kept for code in flight. */
export * from '../pipeline/handler';
