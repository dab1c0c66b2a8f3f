/**
 * Several server instances on one PostgreSQL database: an event caused through instance A reaches a
 * websocket connected to instance B exactly once, through PostgreSQL's NOTIFY, and, with REDIS_URL, through
 * Redis (the machine's, 127.0.0.1:6379) with no NOTIFY at all. Runs in the PostgreSQL pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { freshDatabase, startTestServer, type TestServer } from '../support/server';
import { admin, signIn, tokenOf, userWith } from '../support/fixtures';
import { RawSocket } from '../support/ws';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

for (const via of ['postgres', 'redis'] as const) {
  describe(`two instances, events through ${via}`, () => {
    let database: Awaited<ReturnType<typeof freshDatabase>>;
    let a: TestServer;
    let b: TestServer;
    const sockets: RawSocket[] = [];
    // the administrator made by A's first start
    const adminOnB = () => signIn(b, a.adminLogin, a.adminPassword);
    beforeAll(async () => {
      database = await freshDatabase();
      const config = via === 'redis' ? { redisUrl: REDIS_URL } : {};
      a = await startTestServer({ database: database.url, config });
      b = await startTestServer({ database: database.url, config });
    });
    afterAll(async () => {
      for (const s of sockets) s.close();
      await b?.close();
      await a?.close();
      await database?.drop();
    });

    it('an event caused on A reaches a socket on B exactly once, and one on A too', async () => {
      const apiA = await admin(a);
      const rootGroup = (await getCommand('profile.get').run({ api: apiA }, {})).domains[0]!.id;
      const u = await userWith(a, apiA, { permissions: ['users.view'], domains: [rootGroup] });
      const onB = await RawSocket.signedIn(b.url, tokenOf(await u.client()));
      const onA = await RawSocket.signedIn(a.url, tokenOf(await u.client()));
      sockets.push(onA, onB);
      for (const s of [onA, onB]) await s.subscribe('private-app-changes');

      await getCommand('role.update').run({ api: apiA }, { id: u.roleId, permissions: [] });
      // then a second change, through B: once it arrived, the first had every chance to come twice
      await getCommand('role.update').run(
        { api: await adminOnB() },
        { id: u.roleId, permissions: ['users.view'] },
      );
      for (const s of [onA, onB]) {
        await s.until(() => s.events('private-app-changes').length >= 2);
        const got = s.events('private-app-changes');
        expect(got.map((m) => m.data.roleId)).toEqual([u.roleId, u.roleId]);
        expect(new Set(got.map((m) => m.id)).size).toBe(2);
      }
      // B heard of A's event from the other instance, by the way this pass names
      const received = b.server.context.outbox.received;
      expect(received[via]).toBeGreaterThanOrEqual(1);
      expect(received[via === 'redis' ? 'postgres' : 'redis']).toBe(0);
    });

    it('a text published on A reaches the user’s socket on B', async () => {
      const apiA = await admin(a);
      const me = await getCommand('profile.get').run({ api: apiA }, {});
      const topic = `private-users.${me.id}`;
      const onA = await RawSocket.signedIn(a.url, tokenOf(apiA));
      const onB = await RawSocket.signedIn(b.url, tokenOf(await adminOnB()));
      sockets.push(onA, onB);
      await onB.subscribe(topic);
      onA.send({ type: 'publish', topic, text: 'across instances' });
      const ack = await onA.next((m) => m.topic === topic);
      expect(await onB.next((m) => m.id !== undefined)).toMatchObject({
        id: ack.data.id,
        data: { type: 'ClientMessage', text: 'across instances' },
      });
    });
  });
}
