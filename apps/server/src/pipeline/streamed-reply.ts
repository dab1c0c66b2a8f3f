import type { Readable } from 'node:stream';

/**
 * The one reply a handler writes as a stream — every export and every report file. The transport sends
 * `body` as it is read, with `contentType`, never cached, and, when `filename` is set, as a download by that
 * name; a client that goes away destroys `body`, which stops whatever feeds it.
 */
export class StreamedReply {
  constructor(
    readonly contentType: string,
    readonly body: Readable,
    readonly filename?: string,
  ) {}
}
