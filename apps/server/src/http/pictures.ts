/**
 * Event pictures over HTTP (issue 20 item 6): `GET /storage/logs/{name}` answers only whoever may read the
 * event — with a bearer token, the events list's gate and the event's view scope are checked; else the short
 * signed URL the list handed that reader (`?exp=…&sig=…`, devices/pictures.ts) must hold. The static route of
 * /storage/ does not serve this directory at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, unauthenticatedBody } from '@lintel/core';
import type { ServerContext } from '../context';
import { authenticateBearer } from '../pipeline/principal';
import { PICTURES_DIR, PICTURE_NAME, pictureSignatureHolds, pictureUrlKey } from '../devices/pictures';
import { pictureReadable } from '../handlers/device-event/device-event.handler';
import { storageHeaders } from './security';

/** Whether a path under /storage/ reaches the pictures' directory, however it is spelled. */
export const isPicturePath = (pathname: string): boolean => reachesDir(pathname, PICTURES_DIR);

/** Whether a path under /storage/ reaches a folder of it (pictures, face photos), however it is spelled. */
export function reachesDir(pathname: string, dir: string): boolean {
  const spellings = [pathname];
  try {
    spellings.push(decodeURIComponent(pathname));
  } catch {
    return true;
  }
  return spellings.some((p) =>
    path.posix
      .normalize(`/${p.replace(/\\/g, '/')}`)
      .toLowerCase()
      .startsWith(`/${dir}/`),
  );
}

function bearerOf(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  return typeof h === 'string' ? (/^Bearer\s+(\S+)$/i.exec(h)?.[1] ?? null) : null;
}

export async function servePicture(
  context: ServerContext,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { name } = req.params as { name: string };
  const query = req.query as Record<string, unknown>;
  const notFound = () => reply.status(404).send(errorBody('item_not_found'));
  if (!PICTURE_NAME.test(name)) return notFound();
  let allowed: boolean;
  const token = bearerOf(req);
  if (token) {
    const principal = await authenticateBearer(context, token);
    if (principal.kind === 'anonymous') return reply.status(401).send(unauthenticatedBody());
    allowed = await pictureReadable(context, principal, name, {
      ip: req.ip,
      userAgent: req.headers['user-agent'] ?? null,
      locale: 'en',
    });
  } else if (query.sig !== undefined || query.exp !== undefined) {
    const key = await pictureUrlKey(context.db);
    if (!pictureSignatureHolds(key, name, query.exp, query.sig, context.clock.now()))
      return reply.status(401).send(unauthenticatedBody());
    allowed = true;
  } else return reply.status(401).send(unauthenticatedBody());
  // a picture the caller may not read is one he is not told exists
  if (!allowed) return notFound();
  const file = path.join(context.config.storageDir, PICTURES_DIR, name);
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(file);
  } catch {
    return notFound();
  }
  storageHeaders({ setHeader: (k: string, v: string) => reply.header(k, v) }, file);
  return reply
    .type(name.endsWith('.png') ? 'image/png' : 'image/jpeg')
    .header('content-length', stat.size)
    .header('cache-control', 'private, max-age=300')
    .send(fs.createReadStream(file));
}
