/**
 * A reader that stops early (`lintel users list --all | head -1`) closes the pipe: the next write fails
 * with EPIPE. As every Unix tool does, that ends the CLI quietly with success: nothing more can be shown.
 */
export function isClosedPipe(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null)?.code === 'EPIPE';
}

/** Ends the process with 0 on the first EPIPE of stdout, before anything else sees the error. */
export function exitQuietlyOnClosedPipe(stdout: NodeJS.WriteStream, exit: (code: number) => never): void {
  stdout.on('error', (err) => {
    if (isClosedPipe(err)) exit(0);
    throw err;
  });
}
