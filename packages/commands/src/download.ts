import type { ZodType } from 'zod';
import { toRequest, type Command, type CommandContext } from './command';

/** A file a command answered (an image, a wallet pass): its bytes, type and the name the server gave it. */
export interface DownloadedFile {
  bytes: Uint8Array;
  contentType: string;
  filename: string | null;
}

/**
 * Runs a command whose reply is a file rather than JSON (declared `result: z.unknown()`, `hidden`): its
 * arguments checked by its schema and placed as `run` places them, the reply read whole (these files are
 * small). The console and the CLI fetch QR images and wallet passes through it.
 */
export async function downloadFile<A extends ZodType>(
  ctx: CommandContext,
  cmd: Command<A>,
  args: unknown,
): Promise<DownloadedFile> {
  const parsed = cmd.args.parse(args) as Record<string, unknown>;
  const req = toRequest(cmd, parsed ?? {});
  const res = await ctx.api.openStream(cmd.http.method, req.path, {
    query: req.query,
    auth: cmd.access === 'session',
    timeoutMs: cmd.timeoutMs,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return {
    bytes,
    contentType: res.headers.get('content-type') ?? 'application/octet-stream',
    filename: /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? null,
  };
}
