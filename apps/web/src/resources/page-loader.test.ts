import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PageLoader, pageOf, pagesToEvict, pagesToKeep, planPages, type FetchPage } from './page-loader';

describe('which pages a view needs', () => {
  it('asks for page 1 before the total is known, nothing for an empty list', () => {
    expect(planPages({ first: 0, last: 30, total: null, pageSize: 100 })).toEqual([1]);
    expect(planPages({ first: 0, last: 30, total: 0, pageSize: 100 })).toEqual([]);
  });

  it('loads the pages under the view, and the next one near its edge', () => {
    expect(planPages({ first: 0, last: 30, total: 100_000, pageSize: 100 })).toEqual([1]);
    expect(planPages({ first: 40, last: 75, total: 100_000, pageSize: 100 })).toEqual([1, 2]);
    // across a page boundary: both, the one holding the middle first
    expect(planPages({ first: 90, last: 125, total: 100_000, pageSize: 100 })).toEqual([2, 1]);
    expect(planPages({ first: 110, last: 140, total: 100_000, pageSize: 100 })).toEqual([2, 1]);
  });

  it('fetches around a jump, not from the start (a scrollbar drag to the middle)', () => {
    expect(planPages({ first: 50_030, last: 50_060, total: 100_000, pageSize: 100 })).toEqual([501]);
    expect(planPages({ first: 50_080, last: 50_110, total: 100_000, pageSize: 100 })).toEqual([501, 502]);
    expect(planPages({ first: 50_040, last: 50_075, total: 100_000, pageSize: 100 })).toEqual([501, 502]);
  });

  it('stops at the ends of the list', () => {
    expect(planPages({ first: 99_970, last: 99_999, total: 100_000, pageSize: 100 })).toEqual([1000]);
    expect(planPages({ first: 99_990, last: 100_500, total: 100_000, pageSize: 100 })).toEqual([1000]);
    expect(planPages({ first: 0, last: 40, total: 41, pageSize: 100 })).toEqual([1]);
  });

  it('maps rows to pages', () => {
    expect(pageOf(0, 100)).toBe(1);
    expect(pageOf(99, 100)).toBe(1);
    expect(pageOf(100, 100)).toBe(2);
  });

  it('keeps requests for pages next to the view, and drops the farthest cached pages first', () => {
    expect([...pagesToKeep([5, 6])].sort((a, b) => a - b)).toEqual([4, 5, 6, 7]);
    expect([...pagesToKeep([1])].sort()).toEqual([1, 2]);
    expect(pagesToEvict([1, 2, 3, 50, 51, 99], 40, 4).sort((a, b) => a - b)).toEqual([1, 99]);
    expect(pagesToEvict([1, 2], 1, 4)).toEqual([]);
  });
});

interface Call {
  page: number;
  signal: AbortSignal;
  resolve: (total: number) => void;
  reject: (err: unknown) => void;
}

function fakeServer(pageSize = 100) {
  const calls: Call[] = [];
  const fetchPage: FetchPage<{ id: number }> = (page, limit, signal) =>
    new Promise((resolve, reject) => {
      calls.push({
        page,
        signal,
        resolve: (total) => {
          const from = (page - 1) * limit;
          const n = Math.max(0, Math.min(limit, total - from));
          resolve({ data: Array.from({ length: n }, (_, i) => ({ id: from + i + 1 })), meta: { total } });
        },
        reject,
      });
    });
  return { calls, fetchPage, pageSize };
}

describe('PageLoader', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sizes the list from the first reply and fetches pages as the view moves', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    loader.setFetcher(s.fetchPage);
    expect(s.calls.map((c) => c.page)).toEqual([1]);
    expect(loader.getSummary()).toMatchObject({ total: null, loading: true });
    s.calls[0]!.resolve(100_000);
    await vi.runAllTimersAsync();
    expect(loader.getSummary()).toMatchObject({ total: 100_000, loading: false, error: null });
    expect(loader.rowAt(0)).toEqual({ id: 1 });
    expect(loader.rowAt(100)).toBeUndefined();

    loader.setRange(70_040, 70_060);
    await vi.runAllTimersAsync();
    expect(s.calls.map((c) => c.page)).toEqual([1, 701]);
    s.calls[1]!.resolve(100_000);
    await vi.runAllTimersAsync();
    expect(loader.rowAt(70_000)).toEqual({ id: 70_001 });
    expect(loader.loadedRows(69_999, 70_001).map((r) => r.index)).toEqual([70_000, 70_001]);
  });

  it('aborts every request of an old query and ignores its late answers', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    loader.setFetcher(s.fetchPage);
    const old = s.calls[0]!;
    loader.setFetcher(s.fetchPage); // the filter changed
    expect(old.signal.aborted).toBe(true);
    old.resolve(100_000);
    await vi.runAllTimersAsync();
    expect(loader.getTotal()).toBeNull();
    s.calls[1]!.resolve(12);
    await vi.runAllTimersAsync();
    expect(loader.getTotal()).toBe(12);
  });

  it('aborts pages the view has left (a fast scroll) and keeps the neighbours', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    loader.setFetcher(s.fetchPage);
    s.calls[0]!.resolve(100_000);
    await vi.runAllTimersAsync();
    loader.setRange(10_040, 10_060);
    await vi.runAllTimersAsync();
    const passed = s.calls.at(-1)!;
    expect(passed.page).toBe(101);
    loader.setRange(20_040, 20_060);
    await vi.runAllTimersAsync();
    expect(passed.signal.aborted).toBe(true);
    expect(s.calls.at(-1)!.page).toBe(201);
    // a step back next door does not abort
    const current = s.calls.at(-1)!;
    loader.setRange(20_030, 20_050);
    await vi.runAllTimersAsync();
    expect(current.signal.aborted).toBe(false);
  });

  it('throttles requests while the range keeps changing', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 100 });
    loader.setFetcher(s.fetchPage);
    s.calls[0]!.resolve(100_000);
    await vi.advanceTimersByTimeAsync(200);
    const before = s.calls.length;
    for (let i = 1; i <= 20; i++) {
      loader.setRange(i * 1000 + 40, i * 1000 + 60);
      await vi.advanceTimersByTimeAsync(10);
    }
    await vi.advanceTimersByTimeAsync(200);
    // 20 ranges over 200 ms: a handful of requests, the last range's page among them
    expect(s.calls.length - before).toBeLessThanOrEqual(4);
    expect(s.calls.at(-1)!.page).toBe(201);
  });

  it('asks again on a reload when the list was empty (rows that arrived since show)', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    loader.setFetcher(s.fetchPage);
    s.calls[0]!.resolve(0);
    await vi.runAllTimersAsync();
    const before = s.calls.length;
    loader.reload();
    expect(s.calls.length).toBe(before + 1);
    expect(s.calls.at(-1)!.page).toBe(1);
    s.calls.at(-1)!.resolve(1);
    await vi.runAllTimersAsync();
    expect(loader.rowAt(0)).toEqual({ id: 1 });
  });

  it('keeps rows on screen during a reload, and reports a failure until retry', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    loader.setFetcher(s.fetchPage);
    s.calls[0]!.resolve(250);
    await vi.runAllTimersAsync();
    loader.reload();
    expect(loader.rowAt(5)).toEqual({ id: 6 });
    expect(s.calls.at(-1)!.page).toBe(1);
    s.calls.at(-1)!.reject(new Error('down'));
    await vi.runAllTimersAsync();
    expect(loader.getSummary().error).toBeInstanceOf(Error);
    expect(loader.rowAt(5)).toEqual({ id: 6 });
    const n = s.calls.length;
    loader.setRange(0, 40);
    loader.setRange(0, 41);
    await vi.runAllTimersAsync();
    expect(s.calls.length).toBe(n); // a failed page is not hammered
    loader.retry();
    expect(loader.getSummary().error).toBeNull();
    expect(s.calls.length).toBe(n + 1);
    s.calls.at(-1)!.resolve(240);
    await vi.runAllTimersAsync();
    expect(loader.getTotal()).toBe(240);
  });

  it('keeps at most maxPages in memory, dropping the farthest', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0, maxPages: 3 });
    loader.setFetcher(s.fetchPage);
    s.calls[0]!.resolve(100_000);
    await vi.runAllTimersAsync();
    for (const first of [1_000, 2_000, 3_000, 4_000]) {
      loader.setRange(first + 40, first + 60);
      await vi.runAllTimersAsync();
      s.calls.at(-1)!.resolve(100_000);
      await vi.runAllTimersAsync();
    }
    expect(loader.rowAt(0)).toBeUndefined();
    expect(loader.rowAt(4_050)).toEqual({ id: 4_051 });
    expect(loader.allLoadedRows().length).toBe(300);
  });

  it('notifies subscribers, with a summary that changes only with the status', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    let n = 0;
    loader.subscribe(() => n++);
    loader.setFetcher(s.fetchPage);
    s.calls[0]!.resolve(100_000);
    await vi.runAllTimersAsync();
    const summary = loader.getSummary();
    loader.setRange(30, 60);
    await vi.runAllTimersAsync();
    expect(n).toBeGreaterThan(0);
    expect(loader.getSummary()).toBe(summary);
  });

  it('comes back after dispose (a StrictMode remount) and ignores what was under way', async () => {
    const s = fakeServer();
    const loader = new PageLoader({ fetchPage: s.fetchPage, pumpIntervalMs: 0 });
    loader.setFetcher(s.fetchPage);
    const first = s.calls[0]!;
    loader.dispose();
    expect(first.signal.aborted).toBe(true);
    loader.setFetcher(s.fetchPage);
    first.resolve(5);
    s.calls[1]!.resolve(7);
    await vi.runAllTimersAsync();
    expect(loader.getTotal()).toBe(7);
  });
});
