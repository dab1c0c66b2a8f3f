/**
 * Issue 20, item 10: with REDIS_URL, what crosses instances on Redis is signed with the installation's key
 * (table installation_secrets): a message anyone who can reach Redis publishes on the channel is dropped, a
 * signed one is delivered. Against the machine's Redis, with ioredis as the forger.
 */
import { createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { admin, tokenOf } from '../support/fixtures';
import { RawSocket } from '../support/ws';

/** Polls a condition (never a fixed sleep), with a generous bound. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let ts: TestServer;
let forger: Redis;
beforeAll(async () => {
  ts = await startTestServer({ config: { redisUrl: 'redis://127.0.0.1:6379' } });
  forger = new Redis('redis://127.0.0.1:6379');
}, 120_000);
afterAll(async () => {
  forger?.disconnect();
  await ts?.close();
});

describe('events on Redis', () => {
  it('a forged publish is not delivered; one signed with the installation key is', async () => {
    const db = ts.server.context.db;
    const { id: userId, project_id: projectId } = (
      await sql<{ id: number; project_id: number }>`
        select u.id, u.project_id from users u join accounts a on a.id = u.account_id
        where a.login = ${ts.adminLogin} order by u.id limit 1`.execute(db)
    ).rows[0]!;
    const instance = (
      await sql<{ instance_id: string }>`select instance_id from projects order by id limit 1`.execute(db)
    ).rows[0]!.instance_id;
    const channel = `lintel:events:${instance}`;
    const topic = `private-users.${userId}`;
    const row = (id: number, text: string) => ({
      id,
      topic,
      type: 'ClientMessage',
      payload: { userId, projectId, text },
      audience: JSON.stringify({ kind: 'user' }),
    });
    const socket = await RawSocket.signedIn(ts.url, tokenOf(await admin(ts)));
    try {
      expect(await socket.subscribe(topic)).toMatchObject({ data: { type: 'subscribed' } });
      const outbox = ts.server.context.outbox;
      const seen = () => outbox.received.redis + ((outbox.received as { forged?: number }).forged ?? 0);
      // unsigned, and signed with a wrong key
      const forged = JSON.stringify([row(900_000_001, 'forged')]);
      await forger.publish(channel, forged);
      await forger.publish(
        channel,
        `${createHmac('sha256', 'guess').update(forged).digest('hex')}.${forged}`,
      );
      await until(() => seen() >= 2);
      // signed as an instance signs it: delivered (the channel works; the dropped ones were dropped for their signature)
      const key = (
        await sql<{
          value: string;
        }>`select value from installation_secrets where name = 'redis_signing_key'`.execute(db)
      ).rows[0]!.value;
      const genuine = JSON.stringify([row(900_000_002, 'genuine')]);
      await forger.publish(
        channel,
        `${createHmac('sha256', Buffer.from(key, 'hex')).update(genuine).digest('hex')}.${genuine}`,
      );
      const got = await socket.next((m) => m.topic === topic && m.data.type === 'ClientMessage');
      expect(got.data).toMatchObject({ text: 'genuine' });
      expect(socket.events(topic).map((m) => (m.data as { text?: string }).text)).toEqual(['genuine']);
      expect((outbox.received as { forged?: number }).forged).toBe(2);
    } finally {
      socket.close();
    }
  });
});
