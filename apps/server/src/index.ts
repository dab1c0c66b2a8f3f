export { createServer, type LintelServer } from './http/app';
export { loadConfig, type Config } from './config';
export { sendInvitation, sendConfirmation } from './handlers/registration/codes';
