import { exitQuietlyOnClosedPipe } from './pipe';
import { run } from './program';

exitQuietlyOnClosedPipe(process.stdout, (code) => process.exit(code));
process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
