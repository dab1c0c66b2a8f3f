/** What every verb gets from `main` (GitHub CLI's Factory): tests and embedders swap any of it. */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}
