import { describe, expect, it } from 'vitest';
import { commitPhase, progressLines, type ProgressState } from './progress';
import { wrap } from './report';

const state: ProgressState = { phase: 'reading', rows: 52_000, invalid: 12, fraction: 0.52 };
const lineOne = (p: ReturnType<typeof progressLines>) =>
  `${p.name}  ${'█'.repeat(p.bar.filled)}${'░'.repeat(p.bar.empty)} ${p.pct}`;

describe('the import progress at a terminal', () => {
  it('fits its two lines in the terminal, so a redraw never leaves wrapped copies behind', () => {
    for (const columns of [120, 80, 60, 40]) {
      const p = progressLines('a-rather-long-file-name-of-residents.csv', state, 6_000, columns);
      expect([...lineOne(p)].length).toBeLessThan(columns);
      expect([...p.details].length).toBeLessThan(columns);
    }
    const p = progressLines('people.csv', state, 6_000, 80);
    expect(lineOne(p)).toBe(`people.csv  ${'█'.repeat(21)}${'░'.repeat(19)}  52%`);
    expect(p.details).toBe('52,000 rows · 8,667 rows/s · 0:06 left · 12 invalid');
  });

  it('shows a full bar while the import commits', () => {
    const p = progressLines('people.csv', { ...state, phase: 'committing', fraction: 1 }, 61_000, 80);
    expect(p.bar.empty).toBe(0);
    expect(p.pct).toBe('100%');
    expect(p.details).toBe('committing 52,000 rows… 1:01');
  });

  it('says nothing is written when every row was rejected, or the import stops on rejected rows', () => {
    const line = (s: Partial<ProgressState>) =>
      progressLines('people.csv', { ...state, ...s }, 1_000, 100).details;
    expect(line(commitPhase({ rows: 3, invalid: 3 }, {}))).toBe(
      'writing nothing: 3 of 3 rows rejected… 0:01',
    );
    expect(line(commitPhase({ rows: 3, invalid: 3 }, { continueOnError: true }))).toBe(
      'writing nothing: 3 of 3 rows rejected… 0:01',
    );
    expect(line(commitPhase({ rows: 10, invalid: 2 }, {}))).toBe(
      'writing nothing: 2 of 10 rows rejected… 0:01',
    );
    // past rejected rows, only the good ones are committed
    expect(line(commitPhase({ rows: 10, invalid: 2 }, { continueOnError: true }))).toBe(
      'committing 8 rows… 0:01',
    );
    expect(line(commitPhase({ rows: 10, invalid: 0 }, {}))).toBe('committing 10 rows… 0:01');
    expect(line(commitPhase({ rows: 10, invalid: 2 }, { dryRun: true }))).toContain('checking 10 rows');
  });
});

describe('the import report', () => {
  it('breaks long lines between words, never inside a number', () => {
    const text = `Rejected lines: ${Array.from({ length: 30 }, (_, i) => 1000 + i * 7).join(', ')}`;
    const lines = wrap(text, 80).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThan(80);
    expect(lines.slice(1).every((l) => l.startsWith('  '))).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toBe(text);
  });
});
