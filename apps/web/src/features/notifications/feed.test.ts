import { describe, expect, it } from 'vitest';
import { ManualTimers, type NotificationRecord } from '@lintel/core';
import { UnreadFeed } from './feed';

const note = (id: number, significance: 'important' | 'other' = 'important'): NotificationRecord => ({
  id,
  type: significance === 'important' ? 'device_offline' : 'alarm_processed',
  data: { name: `Panel ${id}` },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  read_at: null,
  significance,
  icon: 'device',
  color: '#d97706',
  popup_action: 'notifications_all',
  sound: null,
});

function setup() {
  const timers = new ManualTimers();
  let unread = [note(2), note(1)];
  const calls = { load: 0, read: [] as number[] };
  const feed = new UnreadFeed({
    timers,
    load: async () => {
      calls.load++;
      const important = unread.filter((n) => n.significance === 'important');
      return { data: unread, important, meta: { total: unread.length, important: important.length } };
    },
    markRead: async (id) => {
      calls.read.push(id);
      unread = unread.filter((n) => n.id !== id);
    },
  });
  return { feed, timers, calls, add: (n: NotificationRecord) => (unread = [n, ...unread]) };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('the bell’s unread feed', () => {
  it('reads the list again 1 s after arrivals, once for several in that second', async () => {
    const { feed, timers, calls, add } = setup();
    await feed.reload();
    expect(calls.load).toBe(1);
    add(note(3));
    feed.arrived(note(3));
    // shown at once
    expect(feed.current.data.map((n) => n.id)).toEqual([3, 2, 1]);
    add(note(4));
    feed.arrived(note(4));
    timers.advance(999);
    await settle();
    expect(calls.load).toBe(1);
    timers.advance(1);
    await settle();
    expect(calls.load).toBe(2);
    expect(feed.current.total).toBe(4);
  });

  it('keeps the newest first when the events arrive out of order, so the bell shows the latest', async () => {
    const { feed } = setup();
    await feed.reload();
    for (const id of [4, 5, 6, 7, 3]) feed.arrived(note(id));
    expect(feed.current.data.map((n) => n.id)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(feed.current.total).toBe(7);
  });

  it('marks what the bell showed read 1 s after opening, and nothing when it closed before', async () => {
    const { feed, timers, calls } = setup();
    await feed.reload();
    feed.opened([1, 2]);
    timers.advance(500);
    feed.closed();
    timers.advance(1000);
    await settle();
    expect(calls.read).toEqual([]);
    feed.opened([1, 2]);
    timers.advance(1000);
    await settle();
    await settle();
    expect(calls.read).toEqual([1, 2]);
    expect(feed.current.total).toBe(0);
  });

  it('keeps the important ones apart: an ordinary arrival leaves them, an important one joins them at once', async () => {
    const { feed, add } = setup();
    await feed.reload();
    expect(feed.current.important.map((n) => n.id)).toEqual([2, 1]);
    add(note(3, 'other'));
    feed.arrived(note(3, 'other'));
    expect(feed.current.important.map((n) => n.id)).toEqual([2, 1]);
    expect(feed.current.importantTotal).toBe(2);
    add(note(4));
    feed.arrived(note(4));
    expect(feed.current.important.map((n) => n.id)).toEqual([4, 2, 1]);
    expect(feed.current).toMatchObject({ total: 4, importantTotal: 3 });
  });

  it('reads a dismissed popup at once: it leaves both lists before the server answers', async () => {
    const { feed, calls } = setup();
    await feed.reload();
    const done = feed.read([2]);
    expect(feed.current.important.map((n) => n.id)).toEqual([1]);
    expect(feed.current.data.map((n) => n.id)).toEqual([1]);
    expect(feed.current).toMatchObject({ total: 1, importantTotal: 1 });
    await done;
    expect(calls.read).toEqual([2]);
    expect(calls.load).toBe(2);
    expect(feed.current).toMatchObject({ total: 1, importantTotal: 1 });
  });
});
