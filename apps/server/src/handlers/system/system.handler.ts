import { Readable } from 'node:stream';
import { openApiDocument, registry } from '@lintel/commands';
import type { HandlerContext, SomeHandlers } from '../../pipeline/handler';
import { StreamedReply } from '../../pipeline/streamed-reply';
import { VERSION } from '../../version';

/** The document is made once per process: the registry does not change while it runs. */
let openApi: Record<string, unknown> | undefined;

/** The metrics as the text Prometheus reads, with its content type (`text/plain; version=0.0.4`). */
async function metricsReply(ctx: HandlerContext): Promise<StreamedReply> {
  const text = await ctx.app.metrics.text();
  return new StreamedReply(ctx.app.metrics.contentType, Readable.from([text]));
}

export const systemHandlers = {
  // the server's URL is relative (`/api/v0`): a client resolves it against where it read the document
  'system.openapi': async () => (openApi ??= openApiDocument(registry.values(), { version: VERSION })),
  'system.metrics': (ctx) => metricsReply(ctx),
} satisfies SomeHandlers;
