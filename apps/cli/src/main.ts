import { useCommandTimeoutsOnly } from './long-requests';
import { exitQuietlyOnClosedPipe } from './pipe';
import { run } from './program';

useCommandTimeoutsOnly();
exitQuietlyOnClosedPipe(process.stdout, (code) => process.exit(code));
process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
});
