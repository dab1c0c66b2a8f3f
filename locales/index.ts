/**
 * Every user-visible string, by language and namespace (i18next resources). The web console, the CLI and
 * the server's e-mails read the same files.
 */
import enCommands from './en/commands.json';
import enErrors from './en/errors.json';
import enWeb from './en/web.json';
import enCli from './en/cli.json';
import enMail from './en/mail.json';
import ruCommands from './ru/commands.json';
import ruErrors from './ru/errors.json';
import ruWeb from './ru/web.json';
import ruCli from './ru/cli.json';
import ruMail from './ru/mail.json';

export const resources = {
  en: { commands: enCommands, errors: enErrors, web: enWeb, cli: enCli, mail: enMail },
  ru: { commands: ruCommands, errors: ruErrors, web: ruWeb, cli: ruCli, mail: ruMail },
} as const;

export const namespaces = ['commands', 'errors', 'web', 'cli', 'mail'] as const;
export type Namespace = (typeof namespaces)[number];
export type Language = keyof typeof resources;
